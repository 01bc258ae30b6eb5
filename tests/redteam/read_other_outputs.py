"""Attack: reads what the old sandbox left visible: an earlier batch's OUT (other students'
results and sources), the default report/batch folder, another shard's folder, the class
folder, the hidden config, the instructor's home.
Defence: an allowlist of binds: none of these paths exist inside the sandbox.
Expect: status=cheat_suspected; without=runtime_error; flags=strict:file_access; without_message=held
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cerrno>
#include <cstring>
#include <string>
extern "C" int open(const char*, int, ...);

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const char* paths[] = {"@@OLD_OUT@@/students/victim/results.json", "@@REPO@@/report/batch",
                           "@@REPO@@/assignment/config.toml", "@@OTHER_STUDENT@@", "@@HIDDEN_FILE@@",
                           "@@SUBMISSIONS@@", "@@OUT@@/grades.csv", "/root/.bash_history", "/etc/shadow"};
    std::string report;
    for (const char* p : paths) {
        int fd = open(p, 0);
        TORCH_CHECK(fd < 0, "SANDBOX ESCAPE: opened ", p);
        report += std::string(p) + ": " + std::strerror(errno) + "; ";
    }
    TORCH_CHECK(false, "sandbox held: ", report);
    return q;
}
"""
