"""A small ConvNet: Conv -> BatchNorm -> ReLU twice, pool, linear."""

from sample_models import SampleSpec


def build(device, dtype):
    from torch import nn

    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(32, 10),
    )
    return model.to(device=device, dtype=dtype)


def example_inputs(device, dtype):
    import torch

    return (torch.randn(8, 3, 32, 32, device=device, dtype=dtype),)


SPEC = SampleSpec(
    name="convnet_bn_relu",
    title="ConvNet with BatchNorm + ReLU",
    teaching_note=(
        "Convolutions are extern calls (cuDNN / mkldnn). In inference, BatchNorm with its "
        "running statistics is just a per-channel scale and shift, so it fuses with the ReLU "
        "into one pointwise kernel after each conv. In a training step BatchNorm computes batch "
        "statistics: a reduction kernel appears, and the backward graph has its own reductions."
    ),
    build=build,
    example_inputs=example_inputs,
    supports_training=True,
)
