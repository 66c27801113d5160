/* Links the installed C ABI; passes with or without a GPU. */
#include <cucore.h>
#include <stdio.h>

int main(void) {
    int count = -1;
    cucore_status_t status = cucore_device_count(&count);
    printf("libcucore %s: %s, %d device(s)\n", cucore_version_string(), cucore_status_string(status), count);
    return (status == CUCORE_SUCCESS || status == CUCORE_ERROR_NO_DRIVER) ? 0 : 1;
}
