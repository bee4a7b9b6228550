#pragma once
#include <sys/epoll.h>
