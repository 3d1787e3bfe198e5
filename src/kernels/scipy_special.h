// Special functions taken from SciPy at run time: pytensor_onnx hands the
// library the C functions of scipy.special.cython_special (as function
// pointers), which are what PyTensor's own backends evaluate for these ops
// (its Numba backend calls the same functions; its Python code, SciPy's
// ufuncs over the same code), so mode ONNX gives PyTensor's values at C speed
// without the library linking SciPy. Only where SciPy is as accurate as the
// portable recipes (their tests, against mpmath, run on the kernels too):
// erfcx, and psi and gammainc in place of the kernels' own (below). SciPy's
// j0, j1, jv, ive, kve, betaincinv, hyp2f1 and owens_t drift from mpmath
// where the recipes do not (tests/python/test_special_*.py,
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

// Functions the kernels have a form of their own for (special.cc, Boost's),
// which SciPy's replaces where SciPy handed it over: PyTensor's default mode
// (Numba) and its Python code evaluate these with SciPy, and SciPy's are as
// fast or faster on PyMC's arguments (psi the same; gammainc 91 against 132
// ns an element on two threads for a, x in [0.1, 10]; bench/results.md,
// twenty-third step) and within the tests' tolerance of mpmath (gammainc
// ~1e-13), so mode ONNX gives the default mode's bits. Without SciPy (a C or
// C++ program loading the library) the kernels' own forms run. SciPy's
// gammaincc is not taken: 4-5x slower than Boost's for a, x in [0.1, 10].
// true and the value in `*value` where SciPy's function is set.
bool psi(double x, double* value);
bool gammainc(double a, double x, double* value);

}  // namespace pytensor_onnx::kernels::scipy_special
