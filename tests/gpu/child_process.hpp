// A helper process of the GPU tests (ipc_test.cpp, communicator_test.cpp):
// started with fork+exec from beside the test binary, reporting one line per
// step on a pipe, and killed if it outlives its deadline, so a hung child fails
// its test instead of hanging the suite.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <vector>

#include "gpu_test.hpp"

namespace gpu {

// The descriptor numbers a child finds its inherited descriptor and its report pipe at.
constexpr int kChildInheritedFd = 200;
constexpr int kChildReportFd = 201;

// The path of helper `name`, built beside this test binary.
inline std::string helper_path(const std::string &name) {
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return name;
    std::string path(self, static_cast<std::size_t>(n));
    return path.substr(0, path.rfind('/') + 1) + name;
}

// A child process with a report pipe, killed if it outlives its deadline.
class Child {
    using Clock = std::chrono::steady_clock;

public:
    ~Child() {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
        if (report_ >= 0) close(report_);
    }

    // Starts `path` with `args` (after REPORT_FD, which is filled in), and
    // `inherited_fd` (if >= 0) inherited as kChildInheritedFd, within `deadline`.
    // Empty string on success.
    std::string start(const std::string &path, std::vector<std::string> args, int inherited_fd = -1,
                      std::chrono::seconds deadline = std::chrono::seconds{90}) {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0) return "pipe2 failed";
        args.insert(args.begin(), std::to_string(kChildReportFd));
        args.insert(args.begin(), path);
        std::vector<char *> argv;
        for (std::string &a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        deadline_ = Clock::now() + deadline;
        pid_ = fork();
        if (pid_ < 0) {
            close(fds[0]);
            close(fds[1]);
            return "fork failed";
        }
        if (pid_ == 0) {  // only async-signal-safe calls until exec
            // dup2 clears close-on-exec, except when a descriptor already has the number.
            if ((inherited_fd >= 0 && dup2(inherited_fd, kChildInheritedFd) < 0) || dup2(fds[1], kChildReportFd) < 0)
                _exit(126);
            if (inherited_fd == kChildInheritedFd) fcntl(kChildInheritedFd, F_SETFD, 0);
            if (fds[1] == kChildReportFd) fcntl(kChildReportFd, F_SETFD, 0);
            execv(argv[0], argv.data());
            _exit(127);
        }
        close(fds[1]);
        report_ = fds[0];
        return "";
    }

    // The next report line; false at the end of the reports or at the deadline
    // (then `timed_out()`).
    bool next_line(std::string &line) {
        for (;;) {
            const std::size_t eol = buffered_.find('\n');
            if (eol != std::string::npos) {
                line = buffered_.substr(0, eol);
                buffered_.erase(0, eol + 1);
                lines_.push_back(line);
                return true;
            }
            if (report_ < 0) return false;
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
            if (left.count() <= 0) {
                timed_out_ = true;
                return false;
            }
            pollfd p{report_, POLLIN, 0};
            const int ready = poll(&p, 1, static_cast<int>(left.count()));
            if (ready < 0 && errno == EINTR) continue;
            if (ready <= 0) continue;  // the deadline check above ends it
            char chunk[4096];
            const ssize_t n = read(report_, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                close(report_);
                report_ = -1;
                continue;
            }
            buffered_.append(chunk, static_cast<std::size_t>(n));
        }
    }

    // Reads the remaining lines and reaps the child (killing it at the deadline).
    // Returns its exit status, or -1 if it did not exit normally.
    int finish() {
        std::string line;
        while (next_line(line)) {
        }
        int status = 0;
        while (pid_ > 0) {
            const pid_t done = waitpid(pid_, &status, WNOHANG);
            if (done == pid_) {
                pid_ = -1;
                break;
            }
            if (Clock::now() > deadline_) {
                timed_out_ = true;
                kill(pid_, SIGKILL);
                waitpid(pid_, &status, 0);
                pid_ = -1;
                return -1;
            }
            gpu::sleep_ms(10);
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }

    bool timed_out() const { return timed_out_; }
    const std::vector<std::string> &lines() const { return lines_; }
    bool said(const std::string &line) const {
        for (const std::string &l : lines_)
            if (l == line) return true;
        return false;
    }
    std::string transcript() const {
        std::string all;
        for (const std::string &l : lines_) all += "  child: " + l + "\n";
        return all;
    }

private:
    pid_t pid_ = -1;
    int report_ = -1;
    std::string buffered_;
    std::vector<std::string> lines_;
    Clock::time_point deadline_{};
    bool timed_out_ = false;
};

}  // namespace gpu
