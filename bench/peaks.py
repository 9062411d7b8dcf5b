"""Vendor peak numbers of common NVIDIA GPUs, to state achieved rates as a fraction of the hardware's peak.

Used only when a GPU is present (on CPU the benchmarks report GFLOP/s and GB/s plainly). Figures are the
dense (no sparsity) numbers of NVIDIA's data sheets: FP64 on the vector units, FP64 on tensor cores where
the GPU has them (cuBLAS/cuSOLVER DGEMM can use them, so they are the ceiling for the SVD), FP32, and the
memory bandwidth in GB/s (10^9 bytes/s). They are ceilings, not expectations.
"""

from __future__ import annotations

from typing import Any

#: (substring of the NVML name, lower case) -> peaks. The first match wins: specific names first.
PEAKS: list[tuple[str, dict[str, Any]]] = [
    ("gh200", {"label": "GH200", "fp64_tflops": 34.0, "fp64_tensor_tflops": 67.0, "fp32_tflops": 67.0, "mem_gbps": 4000}),
    ("h200", {"label": "H200 SXM", "fp64_tflops": 34.0, "fp64_tensor_tflops": 67.0, "fp32_tflops": 67.0, "mem_gbps": 4800}),
    ("h100 nvl", {"label": "H100 NVL", "fp64_tflops": 30.0, "fp64_tensor_tflops": 60.0, "fp32_tflops": 60.0, "mem_gbps": 3900}),
    ("h100 pcie", {"label": "H100 PCIe", "fp64_tflops": 26.0, "fp64_tensor_tflops": 51.0, "fp32_tflops": 51.0, "mem_gbps": 2000}),
    ("h100", {"label": "H100 SXM", "fp64_tflops": 34.0, "fp64_tensor_tflops": 67.0, "fp32_tflops": 67.0, "mem_gbps": 3350}),
    ("b200", {"label": "B200", "fp64_tflops": 37.0, "fp64_tensor_tflops": 37.0, "fp32_tflops": 75.0, "mem_gbps": 8000}),
    ("a100-sxm4-80gb", {"label": "A100 SXM 80GB", "fp64_tflops": 9.7, "fp64_tensor_tflops": 19.5, "fp32_tflops": 19.5, "mem_gbps": 2039}),
    ("a100-sxm4-40gb", {"label": "A100 SXM 40GB", "fp64_tflops": 9.7, "fp64_tensor_tflops": 19.5, "fp32_tflops": 19.5, "mem_gbps": 1555}),
    ("a100 80gb pcie", {"label": "A100 PCIe 80GB", "fp64_tflops": 9.7, "fp64_tensor_tflops": 19.5, "fp32_tflops": 19.5, "mem_gbps": 1935}),
    ("a100", {"label": "A100 40GB", "fp64_tflops": 9.7, "fp64_tensor_tflops": 19.5, "fp32_tflops": 19.5, "mem_gbps": 1555}),
    ("v100-sxm2", {"label": "V100 SXM2", "fp64_tflops": 7.8, "fp64_tensor_tflops": None, "fp32_tflops": 15.7, "mem_gbps": 900}),
    ("v100", {"label": "V100 PCIe", "fp64_tflops": 7.0, "fp64_tensor_tflops": None, "fp32_tflops": 14.0, "mem_gbps": 900}),
    ("l40s", {"label": "L40S", "fp64_tflops": 1.4, "fp64_tensor_tflops": None, "fp32_tflops": 91.6, "mem_gbps": 864}),
    ("a10", {"label": "A10", "fp64_tflops": 0.98, "fp64_tensor_tflops": None, "fp32_tflops": 31.2, "mem_gbps": 600}),
    ("l40", {"label": "L40", "fp64_tflops": 1.4, "fp64_tensor_tflops": None, "fp32_tflops": 90.5, "mem_gbps": 864}),
    ("l4", {"label": "L4", "fp64_tflops": 0.49, "fp64_tensor_tflops": None, "fp32_tflops": 30.3, "mem_gbps": 300}),
    ("t4", {"label": "T4", "fp64_tflops": 0.25, "fp64_tensor_tflops": None, "fp32_tflops": 8.1, "mem_gbps": 320}),
]


def lookup(gpu_name: str | None) -> dict[str, Any] | None:
    """The peaks of the GPU called ``gpu_name`` (as NVML reports it), or None when unknown.

    >>> lookup("NVIDIA H100 80GB HBM3")["label"], lookup("NVIDIA H200")["mem_gbps"], lookup("Intel Xeon")
    ('H100 SXM', 4800, None)
    """
    if not gpu_name:
        return None
    name = gpu_name.lower()
    for key, peaks in PEAKS:
        if key in name:
            return {"matched": key, **peaks}
    return None


def fp64_ceiling(peaks: dict[str, Any]) -> float:
    """The highest FP64 rate of the GPU in FLOP/s (tensor cores where present)."""
    return 1e12 * max(p for p in (peaks["fp64_tflops"], peaks.get("fp64_tensor_tflops")) if p)


def fractions(rate: dict[str, float], peaks: dict[str, Any] | None, n_gpus: int = 1) -> dict[str, float]:
    """Achieved ``rate`` ({"flops": FLOP/s} and/or {"bytes": B/s}) as fractions of ``n_gpus`` GPUs' peaks."""
    if not peaks:
        return {}
    out = {}
    if rate.get("flops"):
        out["of_fp64_peak"] = rate["flops"] / (fp64_ceiling(peaks) * n_gpus)
    if rate.get("bytes"):
        out["of_bandwidth_peak"] = rate["bytes"] / (peaks["mem_gbps"] * 1e9 * n_gpus)
    return out
