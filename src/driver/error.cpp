#include "driver/error.hpp"

#include "driver/driver.hpp"

namespace cucore::driver {

std::string cuda_error_name(int result) noexcept {
    try {
        std::string text = "CUDA error " + std::to_string(result);
        const Table *table = peek();
        const char *name = nullptr;
        const char *description = nullptr;
        if (table && table->cuGetErrorName &&
            table->cuGetErrorName(static_cast<CUresult>(result), &name) == CUDA_SUCCESS && name) {
            text = name;
            if (table->cuGetErrorString &&
                table->cuGetErrorString(static_cast<CUresult>(result), &description) == CUDA_SUCCESS &&
                description)
                text += std::string(" (") + description + ")";
        }
        return text;
    } catch (...) {
        return "CUDA error";
    }
}

}  // namespace cucore::driver
