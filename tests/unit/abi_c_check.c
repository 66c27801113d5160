/* The public header must compile as C (C99 and C11, -Wall -Wextra -Werror
 * -pedantic) and its options macros must initialise their structs. */
#include "cucore.h"

int cucore_abi_c_check(void);
int cucore_abi_c_check(void) {
    cucore_stream_options_t stream_options = CUCORE_STREAM_OPTIONS_INIT;
    cucore_event_options_t event_options = CUCORE_EVENT_OPTIONS_INIT;
    cucore_device_properties_t properties = CUCORE_DEVICE_PROPERTIES_INIT;
    return (int)(stream_options.struct_size + event_options.struct_size + properties.struct_size);
}
