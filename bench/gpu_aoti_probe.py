"""Does AOTInductor load a package on this machine at all, with no compile_viz involved? A one-Linear model
exported, compiled with aoti_compile_and_package and loaded with aoti_load_package in a fresh process (with
faulthandler), then in this one. Usage: python3 bench/gpu_aoti_probe.py cpu cuda

On the H100 machine (torch 2.11.0+cu130, CUDA 13.0 at /usr/local/cuda), 2026-11-26: the CPU package compiled in
53.6 s and loading it died from SIGSEGV in torch/export/pt2_archive/_package.py:1045 _load_aoti, as capture
--aoti's package run did: the machine's torch build, not the capture.
"""
import os
import subprocess
import sys
import time

import torch

print("torch", torch.__version__, "CUDA_HOME", os.environ.get("CUDA_HOME"), "nvcc", subprocess.run("which nvcc; ls -d /usr/local/cuda* 2>&1 | head -3", shell=True, capture_output=True, text=True).stdout.strip())


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l = torch.nn.Linear(64, 64)

    def forward(self, x):
        return torch.nn.functional.gelu(self.l(x))


for dev in sys.argv[1:]:
    m = M().to(dev)
    x = torch.randn(8, 64, device=dev)
    ep = torch.export.export(m, (x,))
    t = time.time()
    p = torch._inductor.aoti_compile_and_package(ep, package_path=f"/tmp/m_{dev}.pt2")
    print(dev, "compiled in %.1f s" % (time.time() - t), p, flush=True)
    code = f"import torch; x=torch.randn(8,64,device='{dev}'); f=torch._inductor.aoti_load_package('{p}'); print('ran', f(x).shape)"
    r = subprocess.run([sys.executable, "-X", "faulthandler", "-c", code], capture_output=True, text=True)
    print(dev, "fresh process rc", r.returncode, r.stdout.strip(), r.stderr.strip()[-1500:], flush=True)
    try:
        f = torch._inductor.aoti_load_package(p)
        print(dev, "same process ran", f(x).shape, flush=True)
    except Exception as e:
        print(dev, "same process failed", e)
