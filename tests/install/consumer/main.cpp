// Compiles the installed C++ facade; passes with or without a GPU.
#include <cucore.hpp>
#include <cstdio>

int main() {
    try {
        std::printf("%d device(s)\n", cucore::Device::count());
    } catch (const cucore::Error &e) {
        if (e.status() != CUCORE_ERROR_NO_DRIVER) return 1;
        std::printf("no driver: %s\n", e.what());
    }
    return 0;
}
