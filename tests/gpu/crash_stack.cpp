// A crash of the GPU test binary prints its stack before it dies (the GPU server has no debugger), so a rare
// crash can be traced from the suite's log alone.
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <initializer_list>

namespace {

void print_stack_and_die(int signal_number) {
    static const char header[] = "\n*** fatal signal in cucore_gpu_tests; stack:\n";
    (void)!write(STDERR_FILENO, header, sizeof header - 1);
    void *frames[64];
    const int count = backtrace(frames, 64);
    backtrace_symbols_fd(frames, count, STDERR_FILENO);
    signal(signal_number, SIG_DFL);
    raise(signal_number);
}

const bool installed = [] {
    for (int signal_number : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) signal(signal_number, print_stack_and_die);
    return true;
}();

}  // namespace
