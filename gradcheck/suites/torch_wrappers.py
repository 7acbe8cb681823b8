"""Small real-valued wrappers around PyTorch functions that a ``torch_audit`` row cannot call
directly: the audit's rows name them by dotted path (``gradcheck.suites.torch_wrappers.rfft``).

Each wrapper only rearranges arguments or views complex results as real pairs
(``torch.view_as_real``), so a finding on a wrapper is a finding on the torch function it
calls.  Why each is needed:

* ``dim`` before the tensors: ``torch.gather(input, dim, index)`` and its kin take ``dim`` as
  the second positional argument, but a row's inputs are the leading positional arguments;
* complex results (fft): the checker differentiates real functions, so a complex output is
  seen as its real and imaginary parts, and a complex input is built from two real ones;
* functions of symmetric matrices (``cholesky``, ``eigh``) read one triangle only: called on a
  full matrix they are not the function of all n*n entries the numeric reference
  differentiates, so the wrapper symmetrizes first (as the TensorFlow audit does);
* functions of triangular matrices read one triangle: the wrapper takes it.
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = [
    "gather", "index_select", "index_add", "index_copy", "index_fill", "index_put",
    "scatter", "scatter_add", "scatter_reduce", "take_along_dim", "masked_fill", "masked_scatter",
    "rows", "where", "cholesky", "eigh_values", "eigh_vectors_gauge", "solve_triangular",
    "cholesky_solve", "lu_solve", "einsum", "multi_dot", "fft", "ifft", "rfft", "irfft", "hfft",
    "ihfft", "fft2", "rfft2", "fftn", "irfftn", "fftshift_rfft", "stft", "istft_roundtrip",
    "embedding", "embedding_bag", "one_hot_mix", "complex_abs", "polygamma", "batch_norm",
    "layer_norm", "rms_norm", "group_norm", "log1p_square",
]

Tensor = Any


# -- indexing and scatter: the dim goes after the tensors ----------------------------------------
def gather(x: Tensor, index: Tensor, dim: int = 0) -> Tensor:
    """``torch.gather(x, dim, index)``."""
    return torch.gather(x, dim, index)


def index_select(x: Tensor, index: Tensor, dim: int = 0) -> Tensor:
    """``torch.index_select(x, dim, index)``."""
    return torch.index_select(x, dim, index)


def index_add(x: Tensor, index: Tensor, source: Tensor, dim: int = 0,
              alpha: float = 1.0) -> Tensor:
    """``torch.index_add(x, dim, index, source, alpha=alpha)``."""
    return torch.index_add(x, dim, index, source, alpha=alpha)


def index_copy(x: Tensor, source: Tensor, dim: int = 0) -> Tensor:
    """``torch.index_copy(x, dim, index, source)`` with the distinct indices ``k-1, ..., 0``
    (with repeated ones the copy that wins is unspecified)."""
    index = torch.arange(source.shape[dim] - 1, -1, -1)
    return torch.index_copy(x, dim, index, source)


def index_fill(x: Tensor, index: Tensor, dim: int = 0, value: float = 0.0) -> Tensor:
    """``torch.index_fill(x, dim, index, value)``."""
    return torch.index_fill(x, dim, index, value)


def index_put(x: Tensor, index: Tensor, values: Tensor, accumulate: bool = True) -> Tensor:
    """``x.index_put((index,), values, accumulate=accumulate)`` (``x[index] += values``)."""
    return torch.Tensor.index_put(x, (index,), values, accumulate=accumulate)


def scatter(x: Tensor, src: Tensor, dim: int = 0) -> Tensor:
    """``torch.scatter(x, dim, index, src)`` with each source row sent to a distinct row (in
    reverse order), so that no two sources race for one place."""
    n = src.shape[dim]
    shape = [1] * src.ndim
    shape[dim] = n
    index = torch.arange(n - 1, -1, -1).reshape(shape).expand(src.shape)
    return torch.scatter(x, dim, index, src)


def scatter_add(x: Tensor, index: Tensor, src: Tensor, dim: int = 0) -> Tensor:
    """``torch.scatter_add(x, dim, index, src)``."""
    return torch.scatter_add(x, dim, index, src)


def scatter_reduce(x: Tensor, index: Tensor, src: Tensor, dim: int = 0, reduce: str = "sum",
                   include_self: bool = True) -> Tensor:
    """``torch.scatter_reduce(x, dim, index, src, reduce, include_self=include_self)``."""
    return torch.scatter_reduce(x, dim, index, src, reduce, include_self=include_self)


def take_along_dim(x: Tensor, index: Tensor, dim: int = 0) -> Tensor:
    """``torch.take_along_dim(x, index, dim)``."""
    return torch.take_along_dim(x, index, dim)


def masked_fill(x: Tensor, mask: Tensor, value: float = 0.0) -> Tensor:
    """``torch.masked_fill(x, mask, value)``."""
    return torch.masked_fill(x, mask, value)


def masked_scatter(x: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``torch.masked_scatter(x, mask, source)`` (``source`` as large as ``x``)."""
    return torch.masked_scatter(x, mask, source)


def rows(x: Tensor, index: Tensor) -> Tensor:
    """Advanced indexing ``x[index]`` (repeated indices accumulate in the gradient)."""
    return torch.Tensor.__getitem__(x, index)


def where(x: Tensor, y: Tensor, mask: Tensor) -> Tensor:
    """``torch.where(mask, x, y)`` (the mask, held fixed, goes last)."""
    return torch.where(mask, x, y)


# -- linalg: symmetric or triangular arguments read one triangle ----------------------------------
def _sym(a: Tensor) -> Tensor:
    return (a + a.mT) / 2


def cholesky(a: Tensor, upper: bool = False) -> Tensor:
    """``torch.linalg.cholesky`` of the symmetric part of ``a``."""
    return torch.linalg.cholesky(_sym(a), upper=upper)


def eigh_values(a: Tensor) -> Tensor:
    """``torch.linalg.eigh(a).eigenvalues`` of the symmetric part of ``a``."""
    return torch.linalg.eigh(_sym(a)).eigenvalues


def eigh_vectors_gauge(a: Tensor) -> Tensor:
    """``V diag(w) V^T`` rebuilt from ``torch.linalg.eigh`` of the symmetric part of ``a``: the
    eigenvectors' derivative, free of their sign (gauge)."""
    w, v = torch.linalg.eigh(_sym(a))
    return (v * torch.tanh(w)[..., None, :]) @ v.mT


def solve_triangular(a: Tensor, b: Tensor, upper: bool = True, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """``torch.linalg.solve_triangular`` on the triangle of ``a`` it reads."""
    tri = torch.triu(a) if upper else torch.tril(a)
    return torch.linalg.solve_triangular(tri, b, upper=upper, left=left,
                                         unitriangular=unitriangular)


def cholesky_solve(a: Tensor, b: Tensor) -> Tensor:
    """``torch.cholesky_solve(b, L)`` with ``L`` the Cholesky factor of the symmetric part of
    the SPD ``a``: solves ``a x = b``."""
    return torch.cholesky_solve(b, torch.linalg.cholesky(_sym(a)))


def lu_solve(a: Tensor, b: Tensor) -> Tensor:
    """``torch.linalg.lu_solve`` of ``torch.linalg.lu_factor(a)``: solves ``a x = b``."""
    lu, pivots = torch.linalg.lu_factor(a)
    return torch.linalg.lu_solve(lu, pivots, b)


def einsum(a: Tensor, b: Tensor, equation: str = "ij,jk->ik") -> Tensor:
    """``torch.einsum(equation, a, b)``."""
    return torch.einsum(equation, a, b)


def multi_dot(a: Tensor, b: Tensor, c: Tensor) -> Tensor:
    """``torch.linalg.multi_dot([a, b, c])``."""
    return torch.linalg.multi_dot([a, b, c])


# -- fft: complex results as (real, imaginary) pairs ----------------------------------------------
def _complex(re: Tensor, im: Tensor) -> Tensor:
    return torch.complex(re, im)


def fft(x: Tensor, norm: str = "backward") -> Tensor:
    """``torch.fft.fft`` of a real signal, as real pairs."""
    return torch.view_as_real(torch.fft.fft(x, norm=norm))


def ifft(re: Tensor, im: Tensor, norm: str = "backward") -> Tensor:
    """``torch.fft.ifft`` of ``re + i im``, as real pairs."""
    return torch.view_as_real(torch.fft.ifft(_complex(re, im), norm=norm))


def rfft(x: Tensor, norm: str = "backward") -> Tensor:
    """``torch.fft.rfft``, as real pairs."""
    return torch.view_as_real(torch.fft.rfft(x, norm=norm))


def irfft(re: Tensor, im: Tensor, norm: str = "backward") -> Tensor:
    """``torch.fft.irfft`` of ``re + i im`` (output length ``2 (n - 1)``)."""
    return torch.fft.irfft(_complex(re, im), norm=norm)


def hfft(re: Tensor, im: Tensor, norm: str = "backward") -> Tensor:
    """``torch.fft.hfft`` of ``re + i im``."""
    return torch.fft.hfft(_complex(re, im), norm=norm)


def ihfft(x: Tensor, norm: str = "backward") -> Tensor:
    """``torch.fft.ihfft``, as real pairs."""
    return torch.view_as_real(torch.fft.ihfft(x, norm=norm).resolve_conj())


def fft2(x: Tensor, norm: str = "backward") -> Tensor:
    """``torch.fft.fft2`` of a real image, as real pairs."""
    return torch.view_as_real(torch.fft.fft2(x, norm=norm))


def rfft2(x: Tensor, norm: str = "backward") -> Tensor:
    """``torch.fft.rfft2``, as real pairs."""
    return torch.view_as_real(torch.fft.rfft2(x, norm=norm))


def fftn(re: Tensor, im: Tensor, norm: str = "backward") -> Tensor:
    """``torch.fft.fftn`` of ``re + i im``, as real pairs."""
    return torch.view_as_real(torch.fft.fftn(_complex(re, im), norm=norm))


def irfftn(re: Tensor, im: Tensor, norm: str = "backward") -> Tensor:
    """``torch.fft.irfftn`` of ``re + i im`` over the last two dims."""
    return torch.fft.irfftn(_complex(re, im), dim=(-2, -1), norm=norm)


def fftshift_rfft(x: Tensor) -> Tensor:
    """``torch.fft.fftshift`` of ``torch.fft.rfft``'s magnitude squared."""
    return torch.fft.fftshift(torch.fft.rfft(x).abs().square())


def stft(x: Tensor, n_fft: int = 4, hop_length: int = 2) -> Tensor:
    """``torch.stft`` with a Hann window, as real pairs."""
    window = torch.hann_window(n_fft, dtype=x.dtype)
    return torch.view_as_real(torch.stft(x, n_fft, hop_length=hop_length, window=window,
                                         return_complex=True))


def istft_roundtrip(x: Tensor, n_fft: int = 4, hop_length: int = 1) -> Tensor:
    """``torch.istft(torch.stft(x))`` with a Hann window: the signal back."""
    window = torch.hann_window(n_fft, dtype=x.dtype)
    spec = torch.stft(x, n_fft, hop_length=hop_length, window=window, return_complex=True)
    return torch.istft(spec, n_fft, hop_length=hop_length, window=window, length=x.shape[-1])


def complex_abs(re: Tensor, im: Tensor) -> Tensor:
    """``torch.abs`` of ``re + i im`` (the complex modulus)."""
    return torch.abs(_complex(re, im))


# -- nn with integer inputs first ----------------------------------------------------------------
def embedding(weight: Tensor, index: Tensor, max_norm: float | None = None) -> Tensor:
    """``torch.nn.functional.embedding(index, weight)``."""
    return torch.nn.functional.embedding(index, weight, max_norm=max_norm)


def embedding_bag(weight: Tensor, index: Tensor, mode: str = "mean") -> Tensor:
    """``torch.nn.functional.embedding_bag`` of (bags, k) indices into ``weight``."""
    return torch.nn.functional.embedding_bag(index, weight, mode=mode)


def one_hot_mix(x: Tensor, labels: Tensor) -> Tensor:
    """``x * one_hot(labels)`` summed over classes: the logit of each label."""
    return (x * torch.nn.functional.one_hot(labels, x.shape[-1]).to(x.dtype)).sum(-1)


# -- arguments torch takes before the tensor -----------------------------------------------------
def polygamma(x: Tensor, n: int = 1) -> Tensor:
    """``torch.polygamma(n, x)``."""
    return torch.polygamma(n, x)


def batch_norm(x: Tensor, weight: Tensor, bias: Tensor, training: bool = True) -> Tensor:
    """``torch.nn.functional.batch_norm`` with the batch's statistics (``training=True``) or
    with fixed running statistics (mean 0.1, variance 1.5)."""
    c = x.shape[1]
    mean = None if training else torch.full((c,), 0.1, dtype=x.dtype)
    var = None if training else torch.full((c,), 1.5, dtype=x.dtype)
    return torch.nn.functional.batch_norm(x, mean, var, weight, bias, training=training)


def layer_norm(x: Tensor, weight: Tensor, bias: Tensor, eps: float = 1e-5) -> Tensor:
    """``torch.nn.functional.layer_norm`` over the last dim (the shape comes after the input)."""
    return torch.nn.functional.layer_norm(x, x.shape[-1:], weight, bias, eps=eps)


def rms_norm(x: Tensor, weight: Tensor, eps: float | None = None) -> Tensor:
    """``torch.nn.functional.rms_norm`` over the last dim."""
    return torch.nn.functional.rms_norm(x, x.shape[-1:], weight, eps=eps)


def group_norm(x: Tensor, weight: Tensor, bias: Tensor, num_groups: int = 2) -> Tensor:
    """``torch.nn.functional.group_norm`` (the group count comes after the input)."""
    return torch.nn.functional.group_norm(x, num_groups, weight, bias)


# -- a torch.library custom op, written the way torch's documentation shows -----------------------
@torch.library.custom_op("gradcheck_audit::log1p_square", mutates_args=())
def log1p_square(x: torch.Tensor) -> torch.Tensor:
    """``log(1 + x**2)`` as a ``torch.library`` custom op with ``register_autograd``: what
    torch does with the forward mode of a user's custom op."""
    return torch.log1p(x * x)


def _log1p_square_context(ctx: Any, inputs: Any, output: Any) -> None:
    ctx.save_for_backward(inputs[0])


def _log1p_square_backward(ctx: Any, grad: Any) -> Any:
    (x,) = ctx.saved_tensors
    return grad * 2 * x / (1 + x * x)


log1p_square.register_autograd(_log1p_square_backward, setup_context=_log1p_square_context)
