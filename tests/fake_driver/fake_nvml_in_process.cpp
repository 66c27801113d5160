// Installs the substitute NVML in-process, through libcucore's NVML seam.
#include "fake_nvml.hpp"

namespace fake::nvml {

void install(unsigned devices) { cucore::driver::install_nvml_substitute(&table(devices)); }
void uninstall() { cucore::driver::install_nvml_substitute(nullptr); }

}  // namespace fake::nvml
