"""Attack: reads the process environment and, through the Python C API, every config
object it can find, then raises an exception whose text holds them all: a student-visible
message (report, Gradescope output) carrying the grader's secrets.
Defence: the child gets an allowlisted environment and a config with no seed and no hidden
configs; its exception text on a public config is its own, and holds none of them.
Expect: status=cheat_suspected; without=runtime_error; flags=strict:environment,strict:python_api; without_message=LEAK
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <string>
extern "C" char** environ;
extern "C" int PyGILState_Ensure();
extern "C" void PyGILState_Release(int);
extern "C" int PyRun_SimpleString(const char*);

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    std::string leak;
    for (char** e = environ; *e; ++e) leak += std::string(*e) + "|";
    int gil = PyGILState_Ensure();
    PyRun_SimpleString(
        "import gc, sys\n"
        "found = [repr(o) for o in gc.get_objects() if type(o).__name__ in ('Config', 'Shape')]\n"
        "sys.stdout.write('CONFIGS ' + ' '.join(found)[:20000] + '\\n')\n");
    PyGILState_Release(gil);
    TORCH_CHECK(false, "LEAK ", leak);
    return q;
}
"""
