// The linear-algebra kernels as ONNX Runtime custom ops, one op per kernel
// and dtype ("Cholesky_float64", "Solve_float32", ...), each with the inputs,
// outputs and attributes of the core's recipe of the same job
// (src/core/recipes/linalg.cc): a rule picks one or the other, nothing else
// changes. Leading dims are batch dims, broadcast between two operands.
//   Cholesky(a; lower)                           factor, NaN where potrf fails
//   SolveTriangular(a, b; lower, trans, unit_diagonal, b_ndim)
//   CholeskySolve(c, b; lower, b_ndim)
//   Solve(a, b; assume_a, lower, b_ndim)          gen, sym/her, pos
//   LUFactor(a) -> (packed, pivots, perm, singular)   int64 pivots and perm
//   PivotToPermutations(pivots; inverse)           int64 only
//   MatrixInverse(a) -> (inverse, singular)       singular: bool, batch dims
//   Det(a), SLogDet(a) -> (sign, log|det|)
//   Eigh(a; lower, driver) -> (w, v)             driver evr (syevr) or evd (syevd)
//   QR(a; pivoting) -> (packed, tau, q, perm)      q the full Q, perm int64
//   SVD(a; full_matrices) -> (u, s, vt); SVDValues(a) -> s
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dtype.h"
#include "linalg.h"
#include "ort_api.h"

namespace pytensor_onnx::kernels {

enum class LinalgKind {
  Cholesky, SolveTriangular, CholeskySolve, Solve, LUFactor, PivotToPermutations, MatrixInverse, Det, SLogDet, Eigh,
  QR, SVD, SVDValues
};
inline constexpr LinalgKind kLinalgKinds[] = {
    LinalgKind::Cholesky,      LinalgKind::SolveTriangular,     LinalgKind::CholeskySolve, LinalgKind::Solve,
    LinalgKind::LUFactor,      LinalgKind::PivotToPermutations, LinalgKind::MatrixInverse, LinalgKind::Det,
    LinalgKind::SLogDet,       LinalgKind::Eigh,                LinalgKind::QR,            LinalgKind::SVD,
    LinalgKind::SVDValues};

// The dtypes of a kernel's ops: float32 and float64, int64 for the permutations.
std::vector<DType> linalg_kind_dtypes(LinalgKind kind);

const char* linalg_kind_name(LinalgKind kind);
std::optional<LinalgKind> linalg_kind_from_name(const std::string& name);

// Whether `kind` makes one matrix (stack) of its operands' dtype from one
// or two square-matrix operands: Cholesky and the solves, which an Elemwise
// node also runs as stages (elemwise.h; attribute `linalg`).
bool makes_one_matrix(LinalgKind kind);

// A kernel's attributes (those of its kind; the others keep these defaults).
struct LinalgSettings {
  LinalgKind kind = LinalgKind::Cholesky;
  bool lower = false;
  bool trans = false;
  bool unit_diagonal = false;
  bool inverse = true;
  bool pivoting = false;
  bool full_matrices = true;
  // SolveTriangular's right-hand side as given: its matrices transposed
  // (last two dims swapped), and/or negated (core pass
  // fold_transposes_into_solve_kernels folds those nodes into the solve).
  bool transpose_b = false;
  bool negate_b = false;
  size_t b_ndim = 1;
  linalg::Assume assume = linalg::Assume::General;
  linalg::EighDriver driver = linalg::EighDriver::Evr;
};

// The settings of a `kind` kernel from a node's attributes, each name with
// `suffix` (an Elemwise node's stage's: "_s2"). Throws std::invalid_argument
// for a value out of range or one its kind does not take.
LinalgSettings linalg_settings(LinalgKind kind, const Ort::ConstKernelInfo& info, const std::string& suffix = "");

// Memory for an output of the shape given (C-contiguous): a reference to
// the caller's callable, valid for the call it is passed to. (Not a
// std::function: a stage's lambda of three references outgrew its inline
// buffer and allocated on every run.)
template <class T>
class OutputMemory {
 public:
  template <class F>
  OutputMemory(F& make)  // NOLINT(google-explicit-constructor): passed as the callable itself
      : object_(&make), call_([](void* object, const std::vector<int64_t>& shape) -> T* {
          return (*static_cast<F*>(object))(shape);
        }) {}
  T* operator()(const std::vector<int64_t>& shape) const { return call_(object_, shape); }

 private:
  void* object_;
  T* (*call_)(void*, const std::vector<int64_t>&);
};

// What a kernel that makes one matrix (makes_one_matrix) computes, from
// C-contiguous operands: `b` is null for Cholesky. Throws
// std::invalid_argument for shapes it cannot take, naming them.
template <class T>
void make_one_matrix(const LinalgSettings& settings, const T* a, const std::vector<int64_t>& a_shape, const T* b,
                     const std::vector<int64_t>* b_shape, const OutputMemory<T>& output);

class LinalgKernel {
 public:
  LinalgKernel(LinalgKind kind, const OrtKernelInfo* info);
  OrtStatusPtr ComputeV2(OrtKernelContext* context);

 private:
  template <class T>
  void compute(Ort::KernelContext& ctx);
  void permutations(Ort::KernelContext& ctx);
  template <class T>
  void rectangular(Ort::KernelContext& ctx);

  LinalgSettings settings_;
};

struct LinalgOp : Ort::CustomOpBase<LinalgOp, LinalgKernel, true> {
  LinalgOp(LinalgKind kind, DType dtype);

  OrtStatusPtr CreateKernelV2(const OrtApi& api, const OrtKernelInfo* info, void** kernel) const;
  const char* GetName() const { return name_.c_str(); }
  size_t GetInputTypeCount() const;
  ONNXTensorElementDataType GetInputType(size_t) const;
  size_t GetOutputTypeCount() const;
  ONNXTensorElementDataType GetOutputType(size_t index) const;

 private:
  LinalgKind kind_;
  DType dtype_;
  std::string name_;
};

}  // namespace pytensor_onnx::kernels
