// libFuzzer's documented entry for programs that own `main` (https://llvm.org/docs/LibFuzzer.html,
// "Using libFuzzer as a library"). The fuzz targets call it from their renamed main (see FuzzDriver.swift).
#ifndef CFUZZERDRIVER_H
#define CFUZZERDRIVER_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
