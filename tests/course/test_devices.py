"""Which GPUs a batch uses and how each child is pointed at one (grader/course/batch/devices.py),
given the flag and the environment Slurm leaves; no GPU needed."""
import pytest

from grader.course.batch.devices import DeviceError, child_env, child_visible, gpu_uuid, parse_gpus, parse_probe

UUIDS = ("GPU-aaaa", "GPU-bbbb", "GPU-cccc", "GPU-dddd")


def _probe(visible):
    """What CUDA reports for a CUDA_VISIBLE_DEVICES value on a 4-GPU node."""
    if visible is None:
        return UUIDS
    return tuple(UUIDS[int(e)] if e.isdigit() else e for e in visible.split(","))


def test_without_cuda_visible_devices_indices_are_cudas():
    env = {}
    assert parse_gpus("0,2", env) == (0, 2) and parse_gpus(None, env) == ()
    assert child_env(2, env, _probe) == {"CUDA_VISIBLE_DEVICES": "2", "GRADER_GPU_UUID": "GPU-cccc"}


def test_slurm_without_device_cgroups_keeps_the_physical_index():
    env = {"CUDA_VISIBLE_DEVICES": "2"}            # Slurm gave this job the node's third GPU
    assert parse_gpus("0", env) == (0,) and parse_gpus("visible", env) == (0,)
    # the child keeps Slurm's "2" (not a bare "0", which is another job's GPU) and
    # nvidia-smi is given the UUID, not an index it would read its own way
    assert child_env(0, env, _probe) == {"CUDA_VISIBLE_DEVICES": "2", "GRADER_GPU_UUID": "GPU-cccc"}


def test_slurm_with_device_cgroups_and_with_uuids():
    assert child_visible(1, {"CUDA_VISIBLE_DEVICES": "0,1"}) == "1"
    env = {"CUDA_VISIBLE_DEVICES": "GPU-dddd,GPU-bbbb"}
    assert parse_gpus("visible", env) == (0, 1)
    assert child_env(1, env, lambda v: pytest.fail("a UUID needs no probe")) == {
        "CUDA_VISIBLE_DEVICES": "GPU-bbbb", "GRADER_GPU_UUID": "GPU-bbbb"}


@pytest.mark.parametrize("text, env, message", [
    ("1", {"CUDA_VISIBLE_DEVICES": "3"}, "not a count; use --gpus 0 or --gpus visible"),
    ("2", {"CUDA_VISIBLE_DEVICES": "0,1"}, "sees 2 GPUs"),
    ("visible", {}, "not set here"),
    ("visible", {"CUDA_VISIBLE_DEVICES": ""}, "holds no GPU"),
    ("two", {}, "not a count"),
    ("0,0", {}, "distinct"),
])
def test_flags_that_name_gpus_the_job_does_not_have_are_refused(text, env, message):
    with pytest.raises(DeviceError, match=message):
        parse_gpus(text, env)


def test_probe_output_and_an_unknown_uuid():
    assert parse_probe("warning: x\nGPU-1234\nMIG-5678\n") == ["GPU-1234", "MIG-5678"]
    assert gpu_uuid(0, {"CUDA_VISIBLE_DEVICES": "0"}, lambda v: ()) == ""      # CUDA could not say
