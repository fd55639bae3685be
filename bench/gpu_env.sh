# Sourced by the bench/gpu_*.sh scripts on the GPU machine: NVLink multicast off in NCCL, PyTorch and
# NVSHMEM (the device tool's rule: it can take the host's GPUs out of service), unbuffered output,
# this checkout importable, and PY the Python that holds torch there.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
PY=${PY:-python3}
