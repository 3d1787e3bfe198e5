#include "linalg_kernel.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "status.h"
#include "thread_instance.h"

namespace pytensor_onnx::kernels {
namespace {

// A workspace kept past this many elements is let go when its run ends.
constexpr size_t kKeptWorkspace = size_t{1} << 20;

template <class V>
void let_go_if_large(V& values) {
  if (values.capacity() > kKeptWorkspace) V().swap(values);
}

// This thread's LAPACK workspace, kept from run to run: a Gaussian process's
// 20 x 20 solves allocated their copies of b and their pivots on every call.
// (Every routine sizes and writes what it reads: linalg.cc.)
template <class T>
class ThreadWorkspace {
 public:
  ThreadWorkspace() : ws_(thread_instance<linalg::Workspace<T>>()) {}
  ~ThreadWorkspace() {
    let_go_if_large(ws_.values);
    let_go_if_large(ws_.more);
    let_go_if_large(ws_.extra);
    let_go_if_large(ws_.ints);
  }
  ThreadWorkspace(const ThreadWorkspace&) = delete;
  ThreadWorkspace& operator=(const ThreadWorkspace&) = delete;
  linalg::Workspace<T>& get() { return ws_; }

 private:
  linalg::Workspace<T>& ws_;
};

struct Arity {
  size_t inputs, outputs;
};

Arity arity_of(LinalgKind kind) {
  switch (kind) {
    case LinalgKind::SolveTriangular:
    case LinalgKind::CholeskySolve:
    case LinalgKind::Solve:
      return {2, 1};
    case LinalgKind::MatrixInverse:
    case LinalgKind::SLogDet:
    case LinalgKind::Eigh:
      return {1, 2};
    case LinalgKind::LUFactor:
      return {1, 4};
    case LinalgKind::Cholesky:
    case LinalgKind::PivotToPermutations:
    case LinalgKind::Det:
    case LinalgKind::SVDValues:
      return {1, 1};
    case LinalgKind::QR:
      return {1, 4};
    case LinalgKind::SVD:
      return {1, 3};
  }
  return {1, 1};
}

// An attribute of the node, or `fallback` when it has none.
int64_t int_attribute(const Ort::ConstKernelInfo& info, const char* name, int64_t fallback) {
  try {
    return info.GetAttribute<int64_t>(name);
  } catch (const Ort::Exception&) {
    return fallback;
  }
}

// A LAPACK size: a dim that fits its 32-bit int.
int lapack_int(int64_t dim) {
  if (dim < 0 || dim > INT_MAX) throw std::invalid_argument("a matrix dim of " + std::to_string(dim) + " is too large for LAPACK");
  return static_cast<int>(dim);
}

std::vector<int64_t> shape_of(const Ort::ConstValue& value) { return value.GetTensorTypeAndShapeInfo().GetShape(); }

// n of the stack of square matrices `shape` (..., n, n).
int square_size(const std::vector<int64_t>& shape) {
  if (shape.size() < 2 || shape[shape.size() - 1] != shape[shape.size() - 2]) {
    std::string text;
    for (int64_t d : shape) text += (text.empty() ? "" : ", ") + std::to_string(d);
    throw std::invalid_argument("expected (stacks of) square matrices, got shape (" + text + ")");
  }
  return lapack_int(shape.back());
}

std::vector<int64_t> concat(std::vector<int64_t> head, const std::vector<int64_t>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

int64_t count(const std::vector<int64_t>& batch) {
  int64_t total = 1;
  for (int64_t d : batch) total *= d;
  return total;
}

}  // namespace

const char* linalg_kind_name(LinalgKind kind) {
  switch (kind) {
    case LinalgKind::Cholesky: return "Cholesky";
    case LinalgKind::SolveTriangular: return "SolveTriangular";
    case LinalgKind::CholeskySolve: return "CholeskySolve";
    case LinalgKind::Solve: return "Solve";
    case LinalgKind::LUFactor: return "LUFactor";
    case LinalgKind::PivotToPermutations: return "PivotToPermutations";
    case LinalgKind::MatrixInverse: return "MatrixInverse";
    case LinalgKind::Det: return "Det";
    case LinalgKind::SLogDet: return "SLogDet";
    case LinalgKind::Eigh: return "Eigh";
    case LinalgKind::QR: return "QR";
    case LinalgKind::SVD: return "SVD";
    case LinalgKind::SVDValues: return "SVDValues";
  }
  return "?";
}

std::vector<DType> linalg_kind_dtypes(LinalgKind kind) {
  if (kind == LinalgKind::PivotToPermutations) return {DType::Int64};
  return {DType::Float32, DType::Float64};
}

std::optional<LinalgKind> linalg_kind_from_name(const std::string& name) {
  for (LinalgKind kind : kLinalgKinds) {
    if (name == linalg_kind_name(kind)) return kind;
  }
  return std::nullopt;
}

bool makes_one_matrix(LinalgKind kind) {
  return kind == LinalgKind::Cholesky || kind == LinalgKind::SolveTriangular || kind == LinalgKind::CholeskySolve ||
         kind == LinalgKind::Solve;
}

LinalgSettings linalg_settings(LinalgKind kind, const Ort::ConstKernelInfo& info, const std::string& suffix) {
  auto flag = [&](const char* name, bool fallback) {
    return int_attribute(info, (name + suffix).c_str(), fallback ? 1 : 0) != 0;
  };
  LinalgSettings s;
  s.kind = kind;
  s.lower = flag("lower", false);
  s.trans = flag("trans", false);
  s.unit_diagonal = flag("unit_diagonal", false);
  s.inverse = flag("inverse", true);
  s.pivoting = flag("pivoting", false);
  s.full_matrices = flag("full_matrices", true);
  const int64_t b_ndim = int_attribute(info, ("b_ndim" + suffix).c_str(), 1);
  if (b_ndim != 1 && b_ndim != 2) throw std::invalid_argument("b_ndim must be 1 or 2");
  s.b_ndim = static_cast<size_t>(b_ndim);
  s.transpose_b = flag("transpose_b", false);
  s.negate_b = flag("negate_b", false);
  if ((s.transpose_b || s.negate_b) && kind != LinalgKind::SolveTriangular) {
    throw std::invalid_argument("transpose_b and negate_b are SolveTriangular's");
  }
  if (s.transpose_b && s.b_ndim != 2) throw std::invalid_argument("transpose_b needs b_ndim 2 (a matrix right-hand side)");
  if (kind == LinalgKind::Solve) s.assume = linalg::assume_from_name(info.GetAttribute<std::string>(("assume_a" + suffix).c_str()));
  if (kind == LinalgKind::Eigh) s.driver = linalg::eigh_driver_from_name(info.GetAttribute<std::string>(("driver" + suffix).c_str()));
  return s;
}

LinalgKernel::LinalgKernel(LinalgKind kind, const OrtKernelInfo* info)
    : settings_(linalg_settings(kind, Ort::ConstKernelInfo(info))) {}

OrtStatusPtr LinalgKernel::ComputeV2(OrtKernelContext* context) {
  return as_status(linalg_kind_name(settings_.kind), [&] {
    Ort::KernelContext ctx(context);
    const auto type = ctx.GetInput(0).GetTensorTypeAndShapeInfo().GetElementType();
    if (settings_.kind == LinalgKind::PivotToPermutations) {
      permutations(ctx);
    } else if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE) {
      compute<double>(ctx);
    } else if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) {
      compute<float>(ctx);
    } else {
      throw std::invalid_argument("takes float32 or float64 matrices");
    }
  });
}

void LinalgKernel::permutations(Ort::KernelContext& ctx) {
  const Ort::ConstValue pivots = ctx.GetInput(0);
  const std::vector<int64_t> shape = shape_of(pivots);
  if (shape.empty()) throw std::invalid_argument("takes (stacks of) pivot vectors, got a scalar");
  const int64_t n = shape.back();
  int64_t* perm = ctx.GetOutput(0, shape).GetTensorMutableData<int64_t>();
  const int64_t* data = pivots.GetTensorData<int64_t>();
  const int64_t items = n == 0 ? 0 : count(shape) / n;
  for (int64_t i = 0; i < items; ++i) linalg::pivots_to_permutation(data + i * n, perm + i * n, n, settings_.inverse);
}

template <class T>
void make_one_matrix(const LinalgSettings& settings, const T* a_data, const std::vector<int64_t>& a_shape,
                     const T* given_b, const std::vector<int64_t>* given_b_shape, const OutputMemory<T>& output) {
  const int n = square_size(a_shape);
  const size_t a_size = static_cast<size_t>(n) * n;
  ThreadWorkspace<T> kept;
  linalg::Workspace<T>& ws = kept.get();
  if (settings.kind == LinalgKind::Cholesky) {
    const linalg::BatchPlan plan = linalg::plan_batch(a_shape, 2);
    const size_t items = static_cast<size_t>(count(plan.batch));
    T* out = output(a_shape);
    for (size_t i = 0; i < items; ++i) linalg::cholesky(a_data + i * a_size, out + i * a_size, n, settings.lower, ws);
    return;
  }
  if (!makes_one_matrix(settings.kind) || !given_b_shape) {
    throw std::logic_error("not a kernel of one matrix, or its right-hand side's shape is missing");
  }
  std::vector<int64_t> b_shape = *given_b_shape;
  const size_t b_ndim = settings.b_ndim;
  if (settings.transpose_b && b_ndim != 2) throw std::logic_error("transpose_b needs b_ndim 2");  // (linalg_settings)
  if (settings.transpose_b && b_shape.size() < 2) throw std::invalid_argument("b read transposed must have 2 dims or more");
  if (settings.transpose_b) std::swap(b_shape.back(), b_shape[b_shape.size() - 2]);
  if (b_shape.size() < b_ndim || b_shape[b_shape.size() - b_ndim] != n) {
    throw std::invalid_argument("b's rows must match a's size " + std::to_string(n));
  }
  const int k = b_ndim == 1 ? 1 : lapack_int(b_shape.back());
  const linalg::BatchPlan plan = linalg::plan_batch(a_shape, 2, b_shape, b_ndim);
  const std::vector<int64_t> core(b_shape.end() - static_cast<long>(b_ndim), b_shape.end());
  T* x = output(concat(plan.batch, core));
  // A transposed b (b_ndim 2, linalg_settings) is, matrix by matrix, the
  // column-major memory LAPACK reads: read as it is, not transposed twice.
  const size_t b_size = static_cast<size_t>(n) * k;
  for (size_t i = 0; i < plan.a_items.size(); ++i) {
    const T* ai = a_data + static_cast<size_t>(plan.a_items[i]) * a_size;
    const linalg::RightHandSide<T> bi{given_b + static_cast<size_t>(plan.b_items[i]) * b_size, settings.transpose_b,
                                      settings.negate_b};
    T* xi = x + i * b_size;
    switch (settings.kind) {
      case LinalgKind::SolveTriangular:
        linalg::solve_triangular(ai, bi, xi, n, k, settings.lower, settings.trans, settings.unit_diagonal, ws);
        break;
      case LinalgKind::CholeskySolve:
        linalg::cholesky_solve(ai, bi, xi, n, k, settings.lower, ws);
        break;
      default:
        linalg::solve(ai, bi, xi, n, k, settings.assume, settings.lower, ws);
        break;
    }
  }
}

template void make_one_matrix<float>(const LinalgSettings&, const float*, const std::vector<int64_t>&, const float*,
                                     const std::vector<int64_t>*, const OutputMemory<float>&);
template void make_one_matrix<double>(const LinalgSettings&, const double*, const std::vector<int64_t>&, const double*,
                                      const std::vector<int64_t>*, const OutputMemory<double>&);

template <class T>
void LinalgKernel::rectangular(Ort::KernelContext& ctx) {
  const Ort::ConstValue a = ctx.GetInput(0);
  const std::vector<int64_t> a_shape = shape_of(a);
  if (a_shape.size() < 2) throw std::invalid_argument("takes (stacks of) matrices");
  const int m = lapack_int(a_shape[a_shape.size() - 2]), n = lapack_int(a_shape.back());
  const int k = std::min(m, n);
  const std::vector<int64_t> batch(a_shape.begin(), a_shape.end() - 2);
  const size_t items = static_cast<size_t>(count(batch));
  const size_t size = static_cast<size_t>(m) * n;
  const T* a_data = a.GetTensorData<T>();
  ThreadWorkspace<T> kept;
  linalg::Workspace<T>& ws = kept.get();
  if (settings_.kind == LinalgKind::QR) {
    T* packed = ctx.GetOutput(0, a_shape).GetTensorMutableData<T>();
    T* tau = ctx.GetOutput(1, concat(batch, {k})).GetTensorMutableData<T>();
    T* q = ctx.GetOutput(2, concat(batch, {m, m})).GetTensorMutableData<T>();
    int64_t* perm = ctx.GetOutput(3, concat(batch, {n})).GetTensorMutableData<int64_t>();
    for (size_t i = 0; i < items; ++i) {
      linalg::qr(a_data + i * size, packed + i * size, tau + i * k, q + i * m * m, perm + i * n, m, n, settings_.pivoting, ws);
    }
    return;
  }
  const bool vectors = settings_.kind == LinalgKind::SVD;
  const bool full_matrices = settings_.full_matrices;
  const int u_cols = full_matrices ? m : k, vt_rows = full_matrices ? n : k;
  T* u = vectors ? ctx.GetOutput(0, concat(batch, {m, u_cols})).GetTensorMutableData<T>() : nullptr;
  T* s = ctx.GetOutput(vectors ? 1 : 0, concat(batch, {k})).GetTensorMutableData<T>();
  T* vt = vectors ? ctx.GetOutput(2, concat(batch, {vt_rows, n})).GetTensorMutableData<T>() : nullptr;
  for (size_t i = 0; i < items; ++i) {
    linalg::svd(a_data + i * size, vectors ? u + i * m * u_cols : nullptr, s + i * k,
                vectors ? vt + i * vt_rows * n : nullptr, m, n, vectors, full_matrices, ws);
  }
}

template <class T>
void LinalgKernel::compute(Ort::KernelContext& ctx) {
  const LinalgKind kind = settings_.kind;
  if (makes_one_matrix(kind)) {
    const Ort::ConstValue a = ctx.GetInput(0);
    const bool solves = kind != LinalgKind::Cholesky;
    std::vector<int64_t> b_shape;
    const T* b = nullptr;
    if (solves) {
      const Ort::ConstValue b_value = ctx.GetInput(1);
      b_shape = shape_of(b_value);
      b = b_value.GetTensorData<T>();
    }
    auto output = [&](const std::vector<int64_t>& shape) { return ctx.GetOutput(0, shape).GetTensorMutableData<T>(); };
    make_one_matrix<T>(settings_, a.GetTensorData<T>(), shape_of(a), b, solves ? &b_shape : nullptr, output);
    return;
  }
  if (kind == LinalgKind::QR || kind == LinalgKind::SVD || kind == LinalgKind::SVDValues) {
    rectangular<T>(ctx);
    return;
  }
  const Ort::ConstValue a = ctx.GetInput(0);
  const std::vector<int64_t> a_shape = shape_of(a);
  const int n = square_size(a_shape);
  const linalg::BatchPlan plan = linalg::plan_batch(a_shape, 2);
  const size_t items = static_cast<size_t>(count(plan.batch));
  const size_t size = static_cast<size_t>(n) * n;
  const T* a_data = a.GetTensorData<T>();
  ThreadWorkspace<T> kept;
  linalg::Workspace<T>& ws = kept.get();
  switch (kind) {
    case LinalgKind::LUFactor: {
      const std::vector<int64_t> vector_shape = concat(plan.batch, {n});
      T* packed = ctx.GetOutput(0, a_shape).GetTensorMutableData<T>();
      int64_t* pivots = ctx.GetOutput(1, vector_shape).GetTensorMutableData<int64_t>();
      int64_t* perm = ctx.GetOutput(2, vector_shape).GetTensorMutableData<int64_t>();
      bool* singular = ctx.GetOutput(3, plan.batch).GetTensorMutableData<bool>();
      for (size_t i = 0; i < items; ++i) {
        singular[i] = linalg::lu_factor(a_data + i * size, packed + i * size, pivots + i * n, perm + i * n, n, ws);
      }
      break;
    }
    case LinalgKind::MatrixInverse: {
      T* out = ctx.GetOutput(0, a_shape).GetTensorMutableData<T>();
      bool* singular = ctx.GetOutput(1, plan.batch).GetTensorMutableData<bool>();
      for (size_t i = 0; i < items; ++i) singular[i] = linalg::inverse(a_data + i * size, out + i * size, n, ws);
      break;
    }
    case LinalgKind::Det:
    case LinalgKind::SLogDet: {
      const bool det = kind == LinalgKind::Det;
      T* first = ctx.GetOutput(0, plan.batch).GetTensorMutableData<T>();
      T* log_abs = det ? nullptr : ctx.GetOutput(1, plan.batch).GetTensorMutableData<T>();
      for (size_t i = 0; i < items; ++i) {
        T sign{}, log_value{};
        linalg::slogdet(a_data + i * size, n, &sign, &log_value, ws);
        // numpy.linalg.det is sign * exp(log|det|), from the same factorization.
        first[i] = det ? sign * std::exp(log_value) : sign;
        if (!det) log_abs[i] = log_value;
      }
      break;
    }
    case LinalgKind::Eigh: {
      T* w = ctx.GetOutput(0, concat(plan.batch, {n})).GetTensorMutableData<T>();
      T* v = ctx.GetOutput(1, a_shape).GetTensorMutableData<T>();
      for (size_t i = 0; i < items; ++i) linalg::eigh(a_data + i * size, w + i * n, v + i * size, n, settings_.lower, settings_.driver, ws);
      break;
    }
    default:
      throw std::logic_error("not a one-matrix kernel");
  }
}

LinalgOp::LinalgOp(LinalgKind kind, DType dtype)
    : kind_(kind), dtype_(dtype), name_(std::string(linalg_kind_name(kind)) + "_" + dtype_name(dtype)) {}

OrtStatusPtr LinalgOp::CreateKernelV2(const OrtApi& api, const OrtKernelInfo* info, void** kernel) const {
  return create_kernel(api, name_, kernel, [&] { return std::make_unique<LinalgKernel>(kind_, info); });
}

size_t LinalgOp::GetInputTypeCount() const { return arity_of(kind_).inputs; }

ONNXTensorElementDataType LinalgOp::GetInputType(size_t) const {
  return static_cast<ONNXTensorElementDataType>(onnx_element_type(dtype_));
}

size_t LinalgOp::GetOutputTypeCount() const { return arity_of(kind_).outputs; }

ONNXTensorElementDataType LinalgOp::GetOutputType(size_t index) const {
  if (kind_ == LinalgKind::MatrixInverse && index == 1) return ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL;
  if (kind_ == LinalgKind::LUFactor && index > 0) {
    return index == 3 ? ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL : ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
  }
  if (kind_ == LinalgKind::QR && index == 3) return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
  return static_cast<ONNXTensorElementDataType>(onnx_element_type(dtype_));
}

}  // namespace pytensor_onnx::kernels
