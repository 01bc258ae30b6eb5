"""Attack: the kernel shares a process with Python, so it calls the Python C API
(declared extern "C", no header) to find the grader's objects and mark its grade ok, then
returns zeros.
Defence: the verdict is decided in the judge's own process from the output tensor; the
link audit sees the Python C API.
Expect: status=cheat_suspected; without=wrong_answer; flags=strict:python_api
"""

_CPP_SRC = r"""
#include <torch/extension.h>
extern "C" int PyGILState_Ensure();
extern "C" void PyGILState_Release(int);
extern "C" int PyRun_SimpleString(const char*);

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    int gil = PyGILState_Ensure();
    PyRun_SimpleString(
        "import gc\n"
        "for o in gc.get_objects():\n"
        "    if isinstance(o, dict) and 'verdict' in o and 'checks' in o:\n"
        "        o.update(verdict='ok', message='correct on every config', done=True)\n"
        "    if type(o).__name__ in ('Worker', 'Judge'):\n"
        "        o.__dict__['verdict'] = 'ok'\n");
    PyGILState_Release(gil);
    return torch::zeros_like(q);
}
"""
