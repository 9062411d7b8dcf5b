"""A NumPy-backed stand-in for CuPy that refuses host/device mixing exactly where CuPy does.

Test-only (tests/strictgpu): this folder is put FIRST on ``PYTHONPATH`` so that the notebook kernel, the
scheduler, nannies and workers import it as ``cupy``. Arrays live in host memory as NumPy arrays, but:

- ``numpy.asarray(x)`` / ``x.__array__()`` raise TypeError (CuPy: "Implicit conversion to a NumPy array
  is not allowed. Please use `.get()` to construct a NumPy array explicitly.");
- arithmetic, comparisons, ``@``, ufuncs (``__array_ufunc__``) and NumPy functions (``__array_function__``)
  with a ``numpy.ndarray`` operand raise TypeError (CuPy: "Unsupported type <class 'numpy.ndarray'>");
- ``x.get()``, ``cupy.asnumpy(x)`` and ``cupy.asarray(numpy_array)`` / ``cupy.array(...)`` are the
  explicit transfers, allowed as in CuPy; Python and NumPy scalars mix freely, as in CuPy;
- reductions return 0-d arrays (as CuPy), which ``float()``, ``int()``, ``bool()`` and ``format()`` accept.

Every other ``cupy.X`` is ``numpy.X`` with the same checks (``cupy.random``, ``cupy.linalg``, ``cupy.fft``
likewise). dask's CuPy backend (``array.backend="cupy"``, dask/array/backends.py) and dask's sizeof work
with it unchanged; dask-cuda's store sees ``__cuda_array_interface__`` and keeps these arrays in its
device tier. Prior art: pySDC pull request 692 (a CuPy stub for CPU CI, which did not refuse mixing).
"""

from __future__ import annotations

import operator
import types

import numpy as _np

__version__ = "13.6.0"
STAND_IN = True  # tests check that the kernel imported this and not the real CuPy

_IMPLICIT = "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a NumPy array explicitly."


def _host(value: object) -> TypeError:
    return TypeError(f"Unsupported type {type(value)}")


def _dev(value: object) -> object:
    """The NumPy value behind a device argument; a host ``numpy.ndarray`` is refused as CuPy does."""
    if isinstance(value, ndarray):
        return value._a
    if isinstance(value, _np.ndarray):
        raise _host(value)
    if isinstance(value, list | tuple):
        return type(value)(_dev(v) for v in value)
    if isinstance(value, dict):
        return {k: _dev(v) for k, v in value.items()}
    return value


def _wrap(value: object) -> object:
    if isinstance(value, _np.ndarray):
        return ndarray._of(value)
    if isinstance(value, _np.generic) and not isinstance(value, _np.str_ | _np.bytes_):
        return ndarray._of(_np.asarray(value))  # CuPy reductions give 0-d device arrays
    if isinstance(value, tuple):  # NumPy's SVDResult/QRResult too: CuPy gives plain tuples of device arrays
        return tuple(_wrap(v) for v in value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def _device_function(function):
    def call(*args, **kwargs):
        return _wrap(function(*_dev(args), **_dev(kwargs)))

    call.__name__ = getattr(function, "__name__", "function")
    call.__doc__ = getattr(function, "__doc__", None)
    return call


class ndarray:
    """A device array (a NumPy array underneath; see the module's docstring)."""

    __array_priority__ = 100

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C") -> None:
        self._a = _np.empty(shape, dtype=dtype, order=order)

    @classmethod
    def _of(cls, a: _np.ndarray) -> ndarray:
        out = cls.__new__(cls)
        out._a = a
        return out

    def __array__(self, *args, **kwargs):
        raise TypeError(_IMPLICIT)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _wrap(getattr(ufunc, method)(*_dev(inputs), **_dev(kwargs)))

    def __array_function__(self, func, types, args, kwargs):
        return _wrap(func(*_dev(args), **_dev(kwargs)))

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self._a.shape, "typestr": self._a.dtype.str, "strides": None, "data": (self._a.ctypes.data, False), "version": 3}

    def get(self, stream=None, order="C", out=None) -> _np.ndarray:
        return self._a.copy(order=order)

    def __getattr__(self, name: str):
        if name == "_a" or name.startswith("__"):  # never NumPy's __array_interface__/__array_struct__
            raise AttributeError(name)
        value = getattr(self._a, name)
        return _device_function(value) if callable(value) else _wrap(value)

    def __reduce__(self):
        return (ndarray._of, (self._a,))

    def __getitem__(self, index):
        return _wrap(self._a[_index(index)])

    def __setitem__(self, index, value) -> None:
        self._a[_index(index)] = _dev(value)

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self):
        return (_wrap(v) for v in self._a)

    def __bool__(self) -> bool:
        return bool(self._a)

    def __float__(self) -> float:
        return float(self._a)

    def __int__(self) -> int:
        return int(self._a)

    def __index__(self) -> int:
        return operator.index(self._a)

    def __complex__(self) -> complex:
        return complex(self._a)

    def __format__(self, spec: str) -> str:
        return format(self._a.item() if self._a.ndim == 0 else self._a, spec)

    def __repr__(self) -> str:
        return repr(self._a)

    def __str__(self) -> str:
        return str(self._a)

    def __hash__(self):
        raise TypeError("unhashable type: 'cupy.ndarray'")


def _index(index):
    """Indices may be host arrays in CuPy (they are copied); device indices are unwrapped."""
    if isinstance(index, ndarray):
        return index._a
    if isinstance(index, tuple):
        return tuple(_index(i) for i in index)
    return index


def _binary(op):
    def forward(self, other):
        return _wrap(op(self._a, _dev(other)))

    def reflected(self, other):
        return _wrap(op(_dev(other), self._a))

    return forward, reflected


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift", "rshift"):
    _forward, _reflected = _binary(getattr(operator, _name if _name not in ("and", "or") else _name + "_"))
    setattr(ndarray, f"__{_name}__", _forward)
    setattr(ndarray, f"__r{_name}__", _reflected)
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(ndarray, f"__{_name}__", _binary(getattr(operator, _name))[0])
for _name in ("neg", "pos", "abs", "invert"):
    setattr(ndarray, f"__{_name}__", (lambda op: lambda self: _wrap(op(self._a)))(getattr(operator, _name)))
ndarray.__module__ = "cupy"  # dask's and distributed's lazy registrations key on the top-level module


def array(obj, dtype=None, copy=True, order="K", ndmin=0):
    """Explicit host -> device copy (allowed in CuPy)."""
    obj = obj._a if isinstance(obj, ndarray) else obj
    return ndarray._of(_np.array(obj, dtype=dtype, copy=True, order=order, ndmin=ndmin))


def asarray(a, dtype=None, order=None, *, blocking=False):
    """Explicit host -> device transfer (allowed in CuPy); a device array passes through."""
    if isinstance(a, ndarray) and (dtype is None or _np.dtype(dtype) == a.dtype):
        return a
    return ndarray._of(_np.array(a._a if isinstance(a, ndarray) else a, dtype=dtype, order=order or "K"))


def asnumpy(a, stream=None, order="C", out=None, *, blocking=True):
    """Explicit device -> host transfer."""
    return a._a.copy(order=order) if isinstance(a, ndarray) else _np.asarray(a, order=order)


def get_array_module(*args):
    return __import__(__name__) if any(isinstance(a, ndarray) for a in args) else _np


class _Namespace(types.ModuleType):
    """``cupy.<sub>``: NumPy's ``numpy.<sub>`` with the device checks."""

    def __init__(self, name: str, host: types.ModuleType) -> None:
        super().__init__(name)
        self._host = host

    def __getattr__(self, name: str):
        return _lookup(getattr(self._host, name))


class _Object:
    """A host object (a NumPy random generator) whose methods take and give device arrays."""

    def __init__(self, host: object) -> None:
        self._host = host

    def __getattr__(self, name: str):
        return _lookup(getattr(self._host, name))


def _lookup(value: object) -> object:
    if isinstance(value, type) or not callable(value):
        return _wrap(value) if isinstance(value, _np.ndarray) else value
    return _device_function(value)


def _random_object(factory):
    """Seeds may be host arrays (CuPy hashes them; dask's RandomState passes NumPy seed arrays)."""

    def make(*args, **kwargs):
        return _Object(factory(*(_index(a) for a in args), **kwargs))

    return make


random = _Namespace("cupy.random", _np.random)
random.default_rng = _random_object(_np.random.default_rng)
random.RandomState = _random_object(_np.random.RandomState)
random.Generator = _random_object(_np.random.Generator)


class XORWOW(_np.random.PCG64):
    """CuPy's default bit generator (dask's CuPy backend asks for it); PCG64's numbers here."""


random.XORWOW = XORWOW
linalg = _Namespace("cupy.linalg", _np.linalg)
fft = _Namespace("cupy.fft", _np.fft)

cuda = types.ModuleType("cupy.cuda")
cuda.memory = types.SimpleNamespace(OutOfMemoryError=type("OutOfMemoryError", (MemoryError,), {}))
cuda.runtime = types.SimpleNamespace(getDeviceCount=lambda: 1, CUDARuntimeError=RuntimeError)
_allocator = [None]
cuda.get_allocator = lambda: _allocator[0]
cuda.set_allocator = lambda allocator=None: _allocator.__setitem__(0, allocator)


def is_available() -> bool:
    return True


def __getattr__(name: str):
    return _lookup(getattr(_np, name))


def _register_dask_serializers() -> None:
    """distributed's CuPy serializers (distributed/protocol/cupy.py) need CUDA memory pointers: register
    host-frame ones for this class directly, so the lazy CuPy registration is never asked for it."""
    try:
        from distributed.protocol.serialize import dask_deserialize, dask_serialize
    except ImportError:
        return

    @dask_serialize.register(ndarray)
    def _serialize(x: ndarray):
        a = x._a if x._a.flags.c_contiguous else x._a.copy(order="C")  # ascontiguousarray makes 0-d arrays 1-d
        return {"shape": a.shape, "dtype": a.dtype.str}, [memoryview(a.reshape(-1).view(_np.uint8))]

    @dask_deserialize.register(ndarray)
    def _deserialize(header, frames):
        return ndarray._of(_np.frombuffer(bytearray(frames[0]), dtype=header["dtype"]).reshape(header["shape"]))


_register_dask_serializers()
