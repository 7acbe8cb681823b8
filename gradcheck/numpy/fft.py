"""``gradcheck.numpy.fft``: numpy.fft's transforms as registered ops (every norm mode)."""

from gradcheck.ops import exports as _exports

globals().update(_exports("FFT"))
__all__ = sorted(_exports("FFT"))
