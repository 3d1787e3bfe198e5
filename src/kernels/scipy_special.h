// Special functions taken from SciPy at run time: pytensor_onnx hands the
// library the C functions of scipy.special.cython_special (as function
// pointers), which are what PyTensor's own backends evaluate for these ops
// (its Numba backend calls the same functions; its Python code, SciPy's
// ufuncs over the same code), so mode ONNX gives PyTensor's values at C speed
// without the library linking SciPy. Only where SciPy is as accurate as the
// portable recipes (their tests, against mpmath, run on the kernels too):
// erfcx. SciPy's j0, j1, jv, ive, kve, betaincinv, hyp2f1 and owens_t drift
// from mpmath where the recipes do not (tests/python/test_special_*.py,
// "scipy_differs": AMOS's NaN for x beyond ~1e9, hyp2f1's inf near z = 1,
// ...), so their kernels are their recipes' methods in scalar code instead
// (special_bessel_*.h, special_betaincinv.h, special_owens_t.h, ...).
// cython_special's functions take a trailing int (Cython's skip-dispatch
// flag, unused by module functions).
#pragma once

#include <string>

namespace pytensor_onnx::kernels::scipy_special {

// Sets function `name` (a cython_special name: "erfcx", "jv", ...) to `fn`;
// false for a name the kernels do not call.
bool set_function(const std::string& name, void* fn);

// The names of the functions not set yet, space-separated.
std::string missing_functions();

// Whether the function behind kernel op `op` ("Erfcx", "Jv", ...) is set.
bool available(const std::string& op);

double erfcx(double x);

}  // namespace pytensor_onnx::kernels::scipy_special
