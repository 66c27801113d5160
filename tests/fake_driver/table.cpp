// The fake's driver table: every entry point wrapped so that it is counted and
// can be failed (calls.cpp). The in-process installation hands it to libcucore;
// the shared library's cuGetProcAddress_v2 answers from it.
#include "table.hpp"

#include <cstring>

#include "calls.hpp"
#include "entry_points.hpp"

namespace fake::detail {
namespace {

enum EntryIndex : int {
#define FAKE_ENTRY_INDEX(name, version) k_##name,
    CUCORE_DRIVER_ENTRY_POINTS(FAKE_ENTRY_INDEX)
#undef FAKE_ENTRY_INDEX
        kEntryCount
};
constexpr const char *kNames[] = {
#define FAKE_ENTRY_NAME(name, version) #name,
    CUCORE_DRIVER_ENTRY_POINTS(FAKE_ENTRY_NAME)
#undef FAKE_ENTRY_NAME
};

template <int Index, auto Fn>
struct Counted;
template <int Index, typename... Args, CUresult (*Fn)(Args...)>
struct Counted<Index, Fn> {
    static CUresult call(Args... args) {
        // The real driver answers its version before cuInit.
        const Injection injected = enter(kNames[Index], Index != k_cuDriverGetVersion);
        if (injected.result != CUDA_SUCCESS && injected.how == Failure::refuse) return injected.result;
        const CUresult result = Fn(args...);
        return result == CUDA_SUCCESS ? injected.result : result;
    }
};

cucore::driver::Table g_table;

}  // namespace

void build_table() {
    g_table = cucore::driver::Table{};
#define FAKE_ENTRY(name, version) g_table.name = &Counted<k_##name, &f_##name>::call;
    CUCORE_DRIVER_ENTRY_POINTS(FAKE_ENTRY)
#undef FAKE_ENTRY
    // Not counted: libcucore asks for error names on its failure paths, and
    // calls cuInit when a table is installed.
    g_table.cuGetErrorName = &f_cuGetErrorName;
    g_table.cuGetErrorString = &f_cuGetErrorString;
    g_table.cuInit = &f_cuInit;
}

void *find_entry_point(const char *name) {
#define FAKE_FIND(entry, version) \
    if (std::strcmp(name, #entry) == 0) return reinterpret_cast<void *>(g_table.entry);
    CUCORE_DRIVER_ENTRY_POINTS(FAKE_FIND)
#undef FAKE_FIND
    return nullptr;
}

}  // namespace fake::detail

namespace fake {
cucore::driver::Table &table() { return detail::g_table; }
}  // namespace fake
