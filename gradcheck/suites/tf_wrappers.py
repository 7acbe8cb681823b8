"""Small wrappers around TensorFlow functions that a ``tensorflow_audit`` row cannot call
directly: the audit's rows name them by dotted path (``gradcheck.suites.tf_wrappers.einsum``).

Each wrapper only rearranges arguments, builds a list argument from positional inputs, views
complex values as real pairs, or is a small composite function (control flow), so a finding
on a wrapper is a finding on the TensorFlow function(s) it calls.  Why each is needed:

* a list argument (``tf.concat``, ``tf.add_n``, ``tf.einsum``'s equation first): a row's
  inputs are the leading positional arguments, one array each;
* complex values (fft): the wrappers build a complex input from two real ones and return the
  real and imaginary parts, so the audit does not depend on how complex outputs are shown;
* composite functions: ``tf.while_loop``, ``tf.scan``, ``tf.map_fn``, ``tf.cond``,
  ``tf.switch_case``, ``tf.foldl``, ``tf.vectorized_map`` and ``tf.function`` bodies need a
  Python body, written here with ordinary TensorFlow ops;
* float32-only kernels (``tf.nn.local_response_normalization``, ``fused_batch_norm``,
  ``adjust_hue``): TensorFlow has no float64 kernel, so the wrapper casts its inputs to
  float32 and returns the float32 result (the check's tolerances follow it: float32 rows).
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

__all__ = [
    "concat", "stack", "add_n", "einsum", "polyval", "global_norm", "clip_by_global_norm",
    "dynamic_stitch", "fft", "ifft", "fft2d", "rfft", "irfft", "rfft2d", "stft",
    "while_loop", "scan", "map_fn", "cond", "switch_case", "foldl", "foldr",
    "vectorized_map", "in_function", "recompute_grad", "custom_gradient_log1pexp",
    "lrn_float32", "fused_batch_norm_float32", "adjust_hue_float32",
    "adjust_saturation_float32", "scatter_nd", "conv2d_transpose", "lu_solve",
    "sparse_segment_sum", "sparse_segment_mean", "sparse_segment_sqrt_n", "gather_nd",
    "image_gradients", "crop_and_resize", "weighted_moments", "max_pool3d_float32",
    "avg_pool3d_float32",
]

Tensor = Any


# -- list arguments ------------------------------------------------------------------------
def concat(a: Tensor, b: Tensor, axis: int = 0) -> Tensor:
    """``tf.concat([a, b], axis)``."""
    return tf.concat([a, b], axis)


def stack(a: Tensor, b: Tensor, axis: int = 0) -> Tensor:
    """``tf.stack([a, b], axis)``."""
    return tf.stack([a, b], axis)


def add_n(a: Tensor, b: Tensor, c: Tensor) -> Tensor:
    """``tf.math.add_n([a, b, c])``."""
    return tf.math.add_n([a, b, c])


def einsum(a: Tensor, b: Tensor, equation: str = "ij,jk->ik") -> Tensor:
    """``tf.einsum(equation, a, b)``."""
    return tf.einsum(equation, a, b)


def polyval(c0: Tensor, c1: Tensor, c2: Tensor, x: Tensor) -> Tensor:
    """``tf.math.polyval([c0, c1, c2], x)``."""
    return tf.math.polyval([c0, c1, c2], x)


def global_norm(a: Tensor, b: Tensor) -> Tensor:
    """``tf.linalg.global_norm([a, b])``."""
    return tf.linalg.global_norm([a, b])


def clip_by_global_norm(a: Tensor, b: Tensor, clip_norm: float = 0.5) -> Tensor:
    """The clipped tensors of ``tf.clip_by_global_norm([a, b], clip_norm)``."""
    clipped, _ = tf.clip_by_global_norm([a, b], clip_norm)
    return tuple(clipped)


def dynamic_stitch(a: Tensor, b: Tensor) -> Tensor:
    """``tf.dynamic_stitch`` of ``a`` and ``b`` (length 3 each) interleaved."""
    return tf.dynamic_stitch([tf.constant([0, 2, 4]), tf.constant([1, 3, 5])], [a, b])


def scatter_nd(indices: Tensor, updates: Tensor, size: int = 6) -> Tensor:
    """``tf.scatter_nd(indices, updates, [size])`` (indices first, as TensorFlow has it;
    the shape as the last argument so that it can be a param)."""
    return tf.scatter_nd(indices, updates, [size])


def gather_nd(x: Tensor, index: Tensor) -> Tensor:
    """``tf.gather_nd(x, index[..., None])``: rows of ``x`` (one index per row)."""
    return tf.gather_nd(x, index[..., None])


def _reversed_rows(x: Tensor, segment_ids: Tensor) -> Tensor:
    """Row indices ``n-1, ..., 0`` in the dtype of ``segment_ids``."""
    return tf.range(tf.shape(x)[0] - 1, -1, -1, dtype=segment_ids.dtype)


def sparse_segment_sum(x: Tensor, segment_ids: Tensor) -> Tensor:
    """``tf.sparse.segment_sum(x, reversed row indices, segment_ids)``."""
    return tf.sparse.segment_sum(x, _reversed_rows(x, segment_ids), segment_ids)


def sparse_segment_mean(x: Tensor, segment_ids: Tensor) -> Tensor:
    """``tf.sparse.segment_mean(x, reversed row indices, segment_ids)``."""
    return tf.sparse.segment_mean(x, _reversed_rows(x, segment_ids), segment_ids)


def sparse_segment_sqrt_n(x: Tensor, segment_ids: Tensor) -> Tensor:
    """``tf.sparse.segment_sqrt_n(x, reversed row indices, segment_ids)``."""
    return tf.sparse.segment_sqrt_n(x, _reversed_rows(x, segment_ids),
                                         segment_ids)


def conv2d_transpose(x: Tensor, filters: Tensor, strides: int = 1) -> Tensor:
    """``tf.nn.conv2d_transpose`` with the output shape of "SAME" padding."""
    n, h, w, _ = x.shape
    out = [n, h * strides, w * strides, filters.shape[2]]
    return tf.nn.conv2d_transpose(x, filters, out, strides, padding="SAME")


def lu_solve(a: Tensor, rhs: Tensor) -> Tensor:
    """``tf.linalg.lu_solve`` on ``tf.linalg.lu(a)``."""
    lower_upper, perm = tf.linalg.lu(a)
    return tf.linalg.lu_solve(lower_upper, perm, rhs)


def weighted_moments(x: Tensor, weights: Tensor, axes: tuple[int, ...] = (0,)) -> Tensor:
    """``tf.nn.weighted_moments(x, axes, weights)`` (the weights after the data)."""
    mean, variance = tf.nn.weighted_moments(x, list(axes), weights)
    return mean, variance


def image_gradients(image: Tensor) -> Tensor:
    """Both outputs of ``tf.image.image_gradients``."""
    dy, dx = tf.image.image_gradients(image)
    return dy, dx


def crop_and_resize(image: Tensor, crop: int = 3) -> Tensor:
    """``tf.image.crop_and_resize`` with two fixed boxes from the first image."""
    boxes = tf.constant([[0.1, 0.2, 0.8, 0.9], [0.0, 0.0, 1.0, 1.0]], dtype=tf.float32)
    return tf.image.crop_and_resize(image, boxes, tf.constant([0, 0]), [crop, crop])


# -- complex values as real pairs ---------------------------------------------------------
def _pair(z: Tensor) -> Tensor:
    return tf.stack([tf.math.real(z), tf.math.imag(z)])


def fft(re: Tensor, im: Tensor) -> Tensor:
    """``tf.signal.fft(re + i im)`` as (real, imaginary)."""
    return _pair(tf.signal.fft(tf.complex(re, im)))


def ifft(re: Tensor, im: Tensor) -> Tensor:
    """``tf.signal.ifft(re + i im)`` as (real, imaginary)."""
    return _pair(tf.signal.ifft(tf.complex(re, im)))


def fft2d(re: Tensor, im: Tensor) -> Tensor:
    """``tf.signal.fft2d(re + i im)`` as (real, imaginary)."""
    return _pair(tf.signal.fft2d(tf.complex(re, im)))


def rfft(x: Tensor) -> Tensor:
    """``tf.signal.rfft(x)`` as (real, imaginary)."""
    return _pair(tf.signal.rfft(x))


def irfft(re: Tensor, im: Tensor) -> Tensor:
    """``tf.signal.irfft(re + i im)`` (a real signal of even length)."""
    return tf.signal.irfft(tf.complex(re, im))


def rfft2d(x: Tensor) -> Tensor:
    """``tf.signal.rfft2d(x)`` as (real, imaginary)."""
    return _pair(tf.signal.rfft2d(x))


def stft(x: Tensor, frame_length: int = 8, frame_step: int = 4) -> Tensor:
    """``tf.signal.stft(x, ...)`` as (real, imaginary)."""
    return _pair(tf.signal.stft(x, frame_length, frame_step, fft_length=frame_length))


# -- control flow and composite functions -----------------------------------------------------
def while_loop(x: Tensor, steps: int = 3) -> Tensor:
    """``x <- sin(x) * 1.5 + x / 2`` repeated ``steps`` times by ``tf.while_loop``."""
    def body(i: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
        return i + 1, tf.sin(y) * 1.5 + y / 2
    _, out = tf.while_loop(lambda i, y: i < steps, body, (tf.constant(0), x))
    return out


def scan(x: Tensor) -> Tensor:
    """``tf.scan``: a running ``acc * tanh(x_t) + x_t`` along axis 0."""
    return tf.scan(lambda acc, xt: acc * tf.tanh(xt) + xt, x)


def map_fn(x: Tensor) -> Tensor:
    """``tf.map_fn``: each row mapped to ``exp(-row**2) * sum(row)``."""
    return tf.map_fn(lambda row: tf.exp(-row * row) * tf.reduce_sum(row), x)


def cond(x: Tensor, y: Tensor) -> Tensor:
    """``tf.cond`` on the sign of ``sum(x)``: ``sin(x) * y`` or ``x * exp(y)``."""
    return tf.cond(tf.reduce_sum(x) > 0, lambda: tf.sin(x) * y, lambda: x * tf.exp(y))


def switch_case(x: Tensor, branch: int = 1) -> Tensor:
    """``tf.switch_case(branch, ...)`` over three smooth functions."""
    return tf.switch_case(tf.constant(branch), [lambda: tf.sin(x), lambda: x * x * x,
                                               lambda: tf.exp(x) * x])


def foldl(x: Tensor) -> Tensor:
    """``tf.foldl``: ``acc * tanh(x_t) + sin(acc)`` over axis 0 (bounded growth)."""
    return tf.foldl(lambda acc, xt: acc * tf.tanh(xt) + tf.sin(acc), x)


def foldr(x: Tensor) -> Tensor:
    """``tf.foldr``: ``acc * tanh(x_t) + cos(x_t)`` over axis 0, from the end."""
    return tf.foldr(lambda acc, xt: acc * tf.tanh(xt) + tf.cos(xt), x)


def vectorized_map(x: Tensor) -> Tensor:
    """``tf.vectorized_map``: each row mapped to ``softplus(row) * row[0]``."""
    return tf.vectorized_map(lambda row: tf.nn.softplus(row) * row[0], x)


@tf.function(autograph=False)
def _traced_body(x: Tensor, y: Tensor) -> Tensor:
    return tf.tanh(x) * y + tf.math.log1p(x * x)


def in_function(x: Tensor, y: Tensor) -> Tensor:
    """A ``tf.function`` body: ``tanh(x) * y + log1p(x**2)``."""
    return _traced_body(x, y)


def recompute_grad(x: Tensor) -> Tensor:
    """``tf.recompute_grad`` of ``sin(x) * exp(x)``."""
    return tf.recompute_grad(lambda t: tf.sin(t) * tf.exp(t))(x)


@tf.custom_gradient
def _log1pexp(x: Tensor) -> Any:
    e = tf.exp(x)

    def grad(upstream: Tensor) -> Tensor:
        return upstream * (1 - 1 / (1 + e))
    return tf.math.log1p(e), grad


def custom_gradient_log1pexp(x: Tensor) -> Tensor:
    """The ``tf.custom_gradient`` example of TensorFlow's documentation (log(1 + e^x))."""
    return _log1pexp(x)


# -- float32-only kernels ---------------------------------------------------------------------
def lrn_float32(x: Tensor, depth_radius: int = 2) -> Tensor:
    """``tf.nn.local_response_normalization`` (float32 only), in float32."""
    return tf.nn.local_response_normalization(tf.cast(x, tf.float32), depth_radius)


def fused_batch_norm_float32(x: Tensor, scale: Tensor, offset: Tensor) -> Tensor:
    """``tf.compat.v1.nn.fused_batch_norm`` in training mode (float32 x), the normalized
    output in float32."""
    y, _, _ = tf.compat.v1.nn.fused_batch_norm(
        tf.cast(x, tf.float32), tf.cast(scale, tf.float32), tf.cast(offset, tf.float32))
    return y


def adjust_hue_float32(image: Tensor, delta: float = 0.2) -> Tensor:
    """``tf.image.adjust_hue`` (float32 kernel), in float32."""
    return tf.image.adjust_hue(tf.cast(image, tf.float32), delta)


def adjust_saturation_float32(image: Tensor, factor: float = 1.5) -> Tensor:
    """``tf.image.adjust_saturation`` (float32 kernel), in float32."""
    return tf.image.adjust_saturation(tf.cast(image, tf.float32), factor)


def max_pool3d_float32(x: Tensor, ksize: int = 2) -> Tensor:
    """``tf.nn.max_pool3d`` (no float64 kernel), in float32."""
    return tf.nn.max_pool3d(tf.cast(x, tf.float32), ksize, 1, "VALID")


def avg_pool3d_float32(x: Tensor, ksize: int = 2) -> Tensor:
    """``tf.nn.avg_pool3d`` (no float64 kernel), in float32."""
    return tf.nn.avg_pool3d(tf.cast(x, tf.float32), ksize, 1, "VALID")
