// A thread's own object of type T, for scratch memory kept from run to run.
#pragma once

namespace pytensor_onnx::kernels {

// The calling thread's T, reached through a call the compiler cannot see
// into. In a library loaded with dlopen (as ONNX Runtime loads this one) a
// thread_local's address is a __tls_get_addr call, and GCC derives it anew
// at each use of the variable, or of a reference bound to it, which it takes
// for a constant: 72 such calls in evaluate, 64 in an Elemwise node's run
// (~5% of a PyMC log-density's time). Fetched here once per run and passed
// down, it is one call. One T per thread: a type is the scratch of one
// kind of run, which never runs inside another of its kind on a thread.
template <class T>
[[gnu::noinline]] T& thread_instance() {
  thread_local T instance;
  return instance;
}

}  // namespace pytensor_onnx::kernels
