// The kernel library's entry points: RegisterCustomOps, which ONNX Runtime
// calls when a session's options load the library, and the description of
// what the kernels compute, which pytensor_onnx reads (kernels.py).
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "blas.h"
#include "check_kernel.h"
#include "dtype.h"
#include "elemwise.h"
#include "lapack.h"
#include "kernel_ir.h"
#include "linalg_kernel.h"
#include "matmul_kernel.h"
#include "ops.h"
#include "reduce_kernel.h"
#include "scipy_special.h"
#include "ort_api.h"

namespace pytensor_onnx::kernels {
namespace {

constexpr const char* kDomain = "pytensor_onnx.kernels";

// The ops live as long as the process: sessions keep pointers to them.
struct Ops {
  std::vector<std::unique_ptr<KernelOp<ElemwiseKernel>>> elemwise;
  std::vector<std::unique_ptr<KernelOp<ScalarLoopKernel>>> loops;
  std::vector<std::unique_ptr<LinalgOp>> linalg;
  std::vector<std::unique_ptr<MatMulOp>> matmul;
  std::vector<std::unique_ptr<CheckOp>> checks;
  std::vector<std::unique_ptr<ReduceOp>> reductions;
  std::vector<OrtCustomOp*> all() const {
    std::vector<OrtCustomOp*> out;
    for (const auto& op : elemwise) out.push_back(op.get());
    for (const auto& op : loops) out.push_back(op.get());
    for (const auto& op : linalg) out.push_back(op.get());
    for (const auto& op : matmul) out.push_back(op.get());
    for (const auto& op : checks) out.push_back(op.get());
    for (const auto& op : reductions) out.push_back(op.get());
    return out;
  }
};

const Ops& kernel_ops() {
  static const Ops ops = [] {
    Ops made;
    for (int d = 0; d < kNumDTypes; ++d) {
      made.elemwise.push_back(std::make_unique<KernelOp<ElemwiseKernel>>(static_cast<DType>(d)));
      made.loops.push_back(std::make_unique<KernelOp<ScalarLoopKernel>>(static_cast<DType>(d)));
      made.checks.push_back(std::make_unique<CheckOp>(static_cast<DType>(d)));
    }
    for (LinalgKind kind : kLinalgKinds) {
      for (DType dtype : linalg_kind_dtypes(kind)) made.linalg.push_back(std::make_unique<LinalgOp>(kind, dtype));
    }
    for (DType dtype : kMatMulDTypes) made.matmul.push_back(std::make_unique<MatMulOp>(dtype));
    for (DType dtype : kReduceDTypes) made.reductions.push_back(std::make_unique<ReduceOp>(dtype));
    return made;
  }();
  return ops;
}

}  // namespace
}  // namespace pytensor_onnx::kernels

extern "C" {

// The API of the ONNX Runtime that last registered the library: the one the
// Python package loaded, whose C API pytensor_onnx's native sessions use
// (src/runtime/session.h) so that the process holds a single ONNX Runtime.
static std::atomic<const OrtApiBase*> pytensor_onnx_kernels_registering_api_base{nullptr};

__attribute__((visibility("default"))) const OrtApiBase* pytensor_onnx_kernels_api_base() {
  return pytensor_onnx_kernels_registering_api_base.load();
}

__attribute__((visibility("default"))) OrtStatus* ORT_API_CALL RegisterCustomOps(OrtSessionOptions* options,
                                                                                  const OrtApiBase* api_base) {
  using namespace pytensor_onnx::kernels;
  pytensor_onnx_kernels_registering_api_base.store(api_base);
  const OrtApi* api = api_base->GetApi(PYTENSOR_ONNX_KERNELS_API_VERSION);
  if (api == nullptr) {
    // A runtime older than 1.21 serves no API 21 and so cannot make an
    // error status either: the session then fails on the unknown ops.
    return nullptr;
  }
  // One domain for every session: options hold a pointer to it, never own
  // it, and it must outlive every session built with them.
  static OrtCustomOpDomain* domain = nullptr;
  static OrtStatus* init_status = nullptr;
  static std::once_flag init;
  std::call_once(init, [api] {
    Ort::InitApi(api);
    init_status = api->CreateCustomOpDomain(kDomain, &domain);
    for (OrtCustomOp* op : kernel_ops().all()) {
      if (init_status != nullptr) break;
      init_status = api->CustomOpDomain_Add(domain, op);
    }
  });
  try {
    if (init_status != nullptr) {
      return api->CreateStatus(api->GetErrorCode(init_status), api->GetErrorMessage(init_status));
    }
    return api->AddCustomOpDomain(options, domain);
  } catch (const std::exception& e) {
    return api->CreateStatus(ORT_FAIL, e.what());
  }
}

// What the element-wise kernels compute (ops.h describe_ops), and the
// library's API version, for pytensor_onnx to read with ctypes.
__attribute__((visibility("default"))) const char* pytensor_onnx_kernels_ops() {
  // Not cached: the ops SciPy's functions evaluate appear once those are set.
  static thread_local std::string text;
  text = pytensor_onnx::kernels::describe_ops();
  return text.c_str();
}

// SciPy's special functions (scipy_special.h), which pytensor_onnx sets from
// scipy.special.cython_special: 1 when `name` is one the kernels call.
__attribute__((visibility("default"))) int pytensor_onnx_kernels_set_special(const char* name, void* fn) {
  return pytensor_onnx::kernels::scipy_special::set_function(name, fn) ? 1 : 0;
}

__attribute__((visibility("default"))) const char* pytensor_onnx_kernels_missing_special() {
  static thread_local std::string text;
  text = pytensor_onnx::kernels::scipy_special::missing_functions();
  return text.c_str();
}

// The LAPACK routines of the linear-algebra kernels (lapack.h), which
// pytensor_onnx sets from SciPy before any session runs: 1 when `name` is
// one the kernels call, else 0.
__attribute__((visibility("default"))) int pytensor_onnx_kernels_set_lapack(const char* name, void* fn) {
  return pytensor_onnx::kernels::lapack::set_routine(name, fn) ? 1 : 0;
}

// The routines still missing, space-separated: the linear-algebra kernels
// run only when this is empty.
__attribute__((visibility("default"))) const char* pytensor_onnx_kernels_missing_lapack() {
  static thread_local std::string text;
  text = pytensor_onnx::kernels::lapack::missing_routines();
  return text.c_str();
}

// The linear-algebra kernels, space-separated ("Cholesky Solve ...").
__attribute__((visibility("default"))) const char* pytensor_onnx_kernels_linalg() {
  static const std::string text = [] {
    std::string out;
    for (auto kind : pytensor_onnx::kernels::kLinalgKinds) {
      out += (out.empty() ? "" : " ") + std::string(pytensor_onnx::kernels::linalg_kind_name(kind));
    }
    return out;
  }();
  return text.c_str();
}

// The BLAS routines of the matrix-product kernel (blas.h), which
// pytensor_onnx sets from SciPy before any session runs: 1 when `name` is one
// the kernel calls, else 0.
__attribute__((visibility("default"))) int pytensor_onnx_kernels_set_blas(const char* name, void* fn) {
  return pytensor_onnx::kernels::blas::set_routine(name, fn) ? 1 : 0;
}

// The routines still missing, space-separated: the product kernel runs only
// when this is empty.
__attribute__((visibility("default"))) const char* pytensor_onnx_kernels_missing_blas() {
  static thread_local std::string text;
  text = pytensor_onnx::kernels::blas::missing_routines();
  return text.c_str();
}

// The BLAS kernels, space-separated (the one matrix product, "MatMul").
__attribute__((visibility("default"))) const char* pytensor_onnx_kernels_blas() { return "MatMul"; }

// A ScalarLoop node's body as LLVM IR (kernel_ir.h), for pytensor_onnx to
// compile: the node's attributes in, the text out ("" for a body the IR
// writer does not cover, or one that does not parse: the node's kernel then
// interprets it, or reports the error).
__attribute__((visibility("default"))) const char* pytensor_onnx_kernels_loop_ir(
    const char* input_dtypes, const char* program, int64_t num_state, const int64_t* next_state, int64_t n_next,
    int64_t until, const char* function_name) {
  using namespace pytensor_onnx::kernels;
  static thread_local std::string text;
  try {
    const LoopProgram loop = parse_loop(input_dtypes, program, static_cast<size_t>(num_state),
                                        std::vector<int64_t>(next_state, next_state + n_next), until);
    text = loop_llvm_ir(loop, function_name);
  } catch (const std::exception&) {
    text.clear();
  }
  return text.c_str();
}

// The compiled body of a ScalarLoop node (of these attributes), for one
// element (`fn`) and for kLoopLanes at once (`lanes_fn`, or null): kernels
// built from then on run it instead of interpreting the body.
__attribute__((visibility("default"))) void pytensor_onnx_kernels_set_compiled_loop(
    const char* input_dtypes, const char* program, int64_t num_state, const int64_t* next_state, int64_t n_next,
    int64_t until, void* fn, void* lanes_fn) {
  using namespace pytensor_onnx::kernels;
  set_compiled_loop(loop_key(input_dtypes, program, static_cast<size_t>(num_state),
                             std::vector<int64_t>(next_state, next_state + n_next), until),
                    {reinterpret_cast<CompiledLoop>(fn), reinterpret_cast<CompiledLoopLanes>(lanes_fn)});
}

// An Elemwise node's program as a block function in LLVM IR (kernel_ir.h),
// written for the inputs flagged in `scalar_inputs` (one byte per input)
// being one element: "" for a program the IR writer does not cover.
__attribute__((visibility("default"))) const char* pytensor_onnx_kernels_block_ir(
    const char* input_dtypes, const char* program, const int64_t* output_registers, int64_t n_out,
    const uint8_t* scalar_inputs, int64_t n_in, const char* function_name) {
  using namespace pytensor_onnx::kernels;
  static thread_local std::string text;
  try {
    const Program parsed =
        parse_program(input_dtypes, program, std::vector<int64_t>(output_registers, output_registers + n_out));
    text = block_llvm_ir(parsed, std::vector<bool>(scalar_inputs, scalar_inputs + n_in), function_name);
  } catch (const std::exception&) {
    text.clear();
  }
  return text.c_str();
}

// The compiled block function of an Elemwise node (of these attributes and
// scalar inputs): kernels built from then on run it where the inputs fit.
__attribute__((visibility("default"))) void pytensor_onnx_kernels_add_compiled_block(
    const char* input_dtypes, const char* program, const int64_t* output_registers, int64_t n_out,
    const uint8_t* scalar_inputs, int64_t n_in, void* fn) {
  using namespace pytensor_onnx::kernels;
  add_compiled_block(block_key(input_dtypes, program, std::vector<int64_t>(output_registers, output_registers + n_out)),
                     {std::vector<bool>(scalar_inputs, scalar_inputs + n_in), reinterpret_cast<BlockFn>(fn)});
}

__attribute__((visibility("default"))) int pytensor_onnx_kernels_api_version() {
  return PYTENSOR_ONNX_KERNELS_API_VERSION;
}
}
