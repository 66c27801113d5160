#include "fake_compilers.hpp"

#include <cctype>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "fake_driver.hpp"

namespace fake_compilers {
namespace {

std::recursive_mutex g_mutex;
long g_calls = 0;
long g_fail_at = 0;
std::vector<std::string> g_compile_flags, g_link_flags;

struct FakeProgram {
    std::string source, name, log, output;
    std::vector<std::pair<std::string, std::string>> names;
};
std::set<FakeProgram *> g_programs;
struct FakeLink {
    std::vector<std::string> flags;
    std::string merged, error_log, info_log, output;
    bool completed = false;
};
std::set<FakeLink *> g_links;

// Counts the call; true when it is the one to fail.
bool failing() {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    ++g_calls;
    return g_fail_at != 0 && g_calls == g_fail_at;
}
#define NVRTC_ENTER() \
    if (failing()) return NVRTC_ERROR_INTERNAL_ERROR;   \
    std::lock_guard<std::recursive_mutex> lock(g_mutex)
#define JIT_ENTER() \
    if (failing()) return NVJITLINK_ERROR_INTERNAL; \
    std::lock_guard<std::recursive_mutex> lock(g_mutex)

std::string body_lines(const std::string &text) {
    std::string lines;
    size_t at = 0;
    while (at < text.size()) {
        size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(at, end - at);
        if (line.rfind("kernel ", 0) == 0 || line.rfind("global ", 0) == 0) lines += line + "\n";
        at = end + 1;
    }
    return lines;
}

FakeProgram *as_program(nvrtcProgram p) {
    auto *program = reinterpret_cast<FakeProgram *>(p);
    return g_programs.count(program) ? program : nullptr;
}

const char *n_error_string(nvrtcResult r) { return r == NVRTC_SUCCESS ? "NVRTC_SUCCESS" : "NVRTC_ERROR (fake)"; }
nvrtcResult n_version(int *major, int *minor) {
    *major = 13;
    *minor = 0;
    return NVRTC_SUCCESS;
}
nvrtcResult n_create(nvrtcProgram *prog, const char *src, const char *name, int headers, const char *const *sources,
                     const char *const *names) {
    NVRTC_ENTER();
    if (!prog || !src || headers < 0 || (headers && (!sources || !names))) return NVRTC_ERROR_INVALID_INPUT;
    auto *p = new FakeProgram{src, name ? name : "", "", "", {}};
    g_programs.insert(p);
    *prog = reinterpret_cast<nvrtcProgram>(p);
    return NVRTC_SUCCESS;
}
nvrtcResult n_destroy(nvrtcProgram *prog) {
    NVRTC_ENTER();
    FakeProgram *p = prog ? as_program(*prog) : nullptr;
    if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
    g_programs.erase(p);
    delete p;
    *prog = nullptr;
    return NVRTC_SUCCESS;
}
nvrtcResult n_compile(nvrtcProgram prog, int count, const char *const *options) {
    NVRTC_ENTER();
    FakeProgram *p = as_program(prog);
    if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
    g_compile_flags.assign(options, options + count);
    if (p->source.find("#error") != std::string::npos) {
        p->log.clear();
        for (int i = 1; i <= 12; ++i) p->log += p->name + "(" + std::to_string(i) + "): error: line " + std::to_string(i) + "\n";
        return NVRTC_ERROR_COMPILATION;
    }
    p->log = "compiled " + p->name + "\n";
    p->output = "FAKECUBIN\n" + body_lines(p->source);
    for (auto &[expression, lowered_name] : p->names) {
        lowered_name = lowered(expression);
        p->output += "kernel " + lowered_name + "\n";
    }
    return NVRTC_SUCCESS;
}
nvrtcResult n_log_size(nvrtcProgram prog, size_t *size) {
    NVRTC_ENTER();
    FakeProgram *p = as_program(prog);
    if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
    *size = p->log.size() + 1;
    return NVRTC_SUCCESS;
}
nvrtcResult n_log(nvrtcProgram prog, char *log) {
    NVRTC_ENTER();
    FakeProgram *p = as_program(prog);
    if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
    std::memcpy(log, p->log.c_str(), p->log.size() + 1);
    return NVRTC_SUCCESS;
}
// PTX is counted with its NUL (as NVRTC does); binaries are not.
nvrtcResult output_size(nvrtcProgram prog, size_t *size, bool text) {
    NVRTC_ENTER();
    FakeProgram *p = as_program(prog);
    if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
    *size = p->output.size() + (text ? 1 : 0);
    return NVRTC_SUCCESS;
}
nvrtcResult output(nvrtcProgram prog, char *out, bool text) {
    NVRTC_ENTER();
    FakeProgram *p = as_program(prog);
    if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
    std::memcpy(out, p->output.c_str(), p->output.size() + (text ? 1 : 0));
    return NVRTC_SUCCESS;
}
nvrtcResult n_add_name(nvrtcProgram prog, const char *expression) {
    NVRTC_ENTER();
    FakeProgram *p = as_program(prog);
    if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
    p->names.emplace_back(expression, "");
    return NVRTC_SUCCESS;
}
nvrtcResult n_lowered(nvrtcProgram prog, const char *expression, const char **lowered_name) {
    NVRTC_ENTER();
    FakeProgram *p = as_program(prog);
    if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
    for (auto &[e, l] : p->names)
        if (e == expression) {
            *lowered_name = l.c_str();
            return NVRTC_SUCCESS;
        }
    return NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID;
}

FakeLink *as_link(nvJitLinkHandle h) {
    auto *link = reinterpret_cast<FakeLink *>(h);
    return g_links.count(link) ? link : nullptr;
}
nvJitLinkResult j_create(nvJitLinkHandle *handle, uint32_t count, const char **options) {
    JIT_ENTER();
    g_link_flags.assign(options, options + count);
    for (const std::string &flag : g_link_flags)
        if (flag == "-bad") return NVJITLINK_ERROR_UNRECOGNIZED_OPTION;
    auto *link = new FakeLink;
    link->flags = g_link_flags;
    g_links.insert(link);
    *handle = reinterpret_cast<nvJitLinkHandle>(link);
    return NVJITLINK_SUCCESS;
}
nvJitLinkResult j_destroy(nvJitLinkHandle *handle) {
    JIT_ENTER();
    FakeLink *link = handle ? as_link(*handle) : nullptr;
    if (!link) return NVJITLINK_ERROR_INVALID_INPUT;
    g_links.erase(link);
    delete link;
    *handle = nullptr;
    return NVJITLINK_SUCCESS;
}
nvJitLinkResult j_add(nvJitLinkHandle handle, nvJitLinkInputType, const void *data, size_t size, const char *name) {
    JIT_ENTER();
    FakeLink *link = as_link(handle);
    if (!link || !data) return NVJITLINK_ERROR_INVALID_INPUT;
    const std::string text(static_cast<const char *>(data), size);
    if (text.rfind("FAKECUBIN\n", 0) != 0) {
        link->error_log = std::string("error: ") + (name ? name : "?") + " is not a fake image\nsecond line\n";
        return NVJITLINK_ERROR_INVALID_INPUT;
    }
    link->merged += body_lines(text);
    return NVJITLINK_SUCCESS;
}
nvJitLinkResult j_complete(nvJitLinkHandle handle) {
    JIT_ENTER();
    FakeLink *link = as_link(handle);
    if (!link) return NVJITLINK_ERROR_INVALID_INPUT;
    if (link->merged.find("kernel unresolved") != std::string::npos) {
        link->error_log = "error: undefined reference to 'unresolved'\n";
        return NVJITLINK_ERROR_PTX_COMPILE;
    }
    link->output = "FAKECUBIN\n" + link->merged;
    link->info_log = "linked\n";
    link->completed = true;
    return NVJITLINK_SUCCESS;
}
nvJitLinkResult j_output_size(nvJitLinkHandle handle, size_t *size) {
    JIT_ENTER();
    FakeLink *link = as_link(handle);
    if (!link || !link->completed) return NVJITLINK_ERROR_INVALID_INPUT;
    *size = link->output.size();
    return NVJITLINK_SUCCESS;
}
nvJitLinkResult j_output(nvJitLinkHandle handle, void *out) {
    JIT_ENTER();
    FakeLink *link = as_link(handle);
    if (!link || !link->completed) return NVJITLINK_ERROR_INVALID_INPUT;
    std::memcpy(out, link->output.data(), link->output.size());
    return NVJITLINK_SUCCESS;
}
nvJitLinkResult j_ptx(nvJitLinkHandle handle, char *out) { return j_output(handle, out); }
nvJitLinkResult j_log_size(nvJitLinkHandle handle, size_t *size, bool error) {
    JIT_ENTER();
    FakeLink *link = as_link(handle);
    if (!link) return NVJITLINK_ERROR_INVALID_INPUT;
    *size = (error ? link->error_log : link->info_log).size() + 1;
    return NVJITLINK_SUCCESS;
}
nvJitLinkResult j_log(nvJitLinkHandle handle, char *out, bool error) {
    JIT_ENTER();
    FakeLink *link = as_link(handle);
    if (!link) return NVJITLINK_ERROR_INVALID_INPUT;
    const std::string &log = error ? link->error_log : link->info_log;
    std::memcpy(out, log.c_str(), log.size() + 1);
    return NVJITLINK_SUCCESS;
}
nvJitLinkResult j_version(unsigned *major, unsigned *minor) {
    *major = 13;
    *minor = 0;
    return NVJITLINK_SUCCESS;
}

cucore::driver::NvrtcTable g_nvrtc;
cucore::driver::NvJitLinkTable g_nvjitlink;

}  // namespace

std::string lowered(const std::string &expression) {
    std::string name = "lowered_";
    for (char c : expression) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return name;
}

void install() {
    {
        std::lock_guard<std::recursive_mutex> lock(g_mutex);
        g_calls = 0;
        g_fail_at = 0;
        // Forget handles an earlier test made the fakes refuse to destroy.
        for (FakeProgram *p : g_programs) delete p;
        g_programs.clear();
        for (FakeLink *l : g_links) delete l;
        g_links.clear();
    }
    g_nvrtc.nvrtcGetErrorString = n_error_string;
    g_nvrtc.nvrtcVersion = n_version;
    g_nvrtc.nvrtcCreateProgram = n_create;
    g_nvrtc.nvrtcDestroyProgram = n_destroy;
    g_nvrtc.nvrtcCompileProgram = n_compile;
    g_nvrtc.nvrtcGetProgramLogSize = n_log_size;
    g_nvrtc.nvrtcGetProgramLog = n_log;
    g_nvrtc.nvrtcGetPTXSize = [](nvrtcProgram p, size_t *s) { return output_size(p, s, true); };
    g_nvrtc.nvrtcGetCUBINSize = g_nvrtc.nvrtcGetLTOIRSize = [](nvrtcProgram p, size_t *s) {
        return output_size(p, s, false);
    };
    g_nvrtc.nvrtcGetPTX = [](nvrtcProgram p, char *o) { return output(p, o, true); };
    g_nvrtc.nvrtcGetCUBIN = g_nvrtc.nvrtcGetLTOIR = [](nvrtcProgram p, char *o) { return output(p, o, false); };
    g_nvrtc.nvrtcAddNameExpression = n_add_name;
    g_nvrtc.nvrtcGetLoweredName = n_lowered;
    g_nvjitlink.nvJitLinkCreate = j_create;
    g_nvjitlink.nvJitLinkDestroy = j_destroy;
    g_nvjitlink.nvJitLinkAddData = j_add;
    g_nvjitlink.nvJitLinkComplete = j_complete;
    g_nvjitlink.nvJitLinkGetLinkedCubinSize = g_nvjitlink.nvJitLinkGetLinkedPtxSize = j_output_size;
    g_nvjitlink.nvJitLinkGetLinkedCubin = j_output;
    g_nvjitlink.nvJitLinkGetLinkedPtx = j_ptx;
    g_nvjitlink.nvJitLinkGetErrorLogSize = [](nvJitLinkHandle h, size_t *s) { return j_log_size(h, s, true); };
    g_nvjitlink.nvJitLinkGetErrorLog = [](nvJitLinkHandle h, char *o) { return j_log(h, o, true); };
    g_nvjitlink.nvJitLinkGetInfoLogSize = [](nvJitLinkHandle h, size_t *s) { return j_log_size(h, s, false); };
    g_nvjitlink.nvJitLinkGetInfoLog = [](nvJitLinkHandle h, char *o) { return j_log(h, o, false); };
    g_nvjitlink.nvJitLinkVersion = j_version;
    cucore::driver::install_nvrtc_substitute(&g_nvrtc, 13000);
    cucore::driver::install_nvjitlink_substitute(&g_nvjitlink, 13000);
}

void set_nvrtc_version(int version) { cucore::driver::install_nvrtc_substitute(&g_nvrtc, version); }

void uninstall() {
    cucore::driver::install_nvrtc_substitute(nullptr);
    cucore::driver::install_nvjitlink_substitute(nullptr);
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    for (FakeProgram *p : g_programs) delete p;  // what a test made the fakes keep
    g_programs.clear();
    for (FakeLink *l : g_links) delete l;
    g_links.clear();
}

void fail_call(long n) {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    g_calls = 0;
    g_fail_at = n;
}

long calls() {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    return g_calls;
}

int live_programs() {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    return static_cast<int>(g_programs.size());
}

int live_links() {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    return static_cast<int>(g_links.size());
}

std::vector<std::string> last_compile_flags() {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    return g_compile_flags;
}

std::vector<std::string> last_link_flags() {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    return g_link_flags;
}

}  // namespace fake_compilers
