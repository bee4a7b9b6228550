#include "CFerryLinux.h"
