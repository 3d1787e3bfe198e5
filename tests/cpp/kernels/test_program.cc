// The kernel library's scalar programs (src/kernels): parsing, checking and
// evaluation over broadcast arrays, without ONNX Runtime.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "evaluate.h"
#include "ops.h"
#include "program.h"
#include "scipy_special.h"

namespace pytensor_onnx::kernels {
namespace {

std::string error_of(const std::string& inputs, const std::string& text, const std::vector<int64_t>& outputs) {
  try {
    parse_program(inputs, text, outputs);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// Each dtype's size (dtype_size's table) is its C++ type's, and each name
// reads back as its dtype.
TEST(KernelDTypes, SizesAndNamesMatchTheirTypes) {
  for (int d = 0; d < kNumDTypes; ++d) {
    const auto dtype = static_cast<DType>(d);
    visit_dtype(dtype, [&](auto value) { EXPECT_EQ(dtype_size(dtype), sizeof(value)) << dtype_name(dtype); });
    EXPECT_EQ(dtype_from_name(dtype_name(dtype)), dtype);
  }
}

TEST(KernelProgram, RejectsWhatItCannotRun) {
  EXPECT_NE(error_of("float64", "Nope float64 0", {1}).find("unknown scalar op 'Nope'"), std::string::npos);
  EXPECT_NE(error_of("float64", "Exp float64 1", {1}).find("operand '1' is not a register"), std::string::npos);
  EXPECT_NE(error_of("int64", "Exp int64 0", {1}).find("Exp has no int64 loop"), std::string::npos);
  EXPECT_NE(error_of("float64 float32", "Add float64 0 1", {2}).find("operands of one dtype"), std::string::npos);
  EXPECT_NE(error_of("float64", "LT float64 0 0", {1}).find("gives bool"), std::string::npos);
  EXPECT_NE(error_of("float64", "Const float64 1.5x", {1}).find("is not a float64"), std::string::npos);
  EXPECT_NE(error_of("uint8", "Const uint8 -1", {1}).find("negative constant"), std::string::npos);
  EXPECT_NE(error_of("float64", "Exp float64 0", {}).find("no outputs"), std::string::npos);
  EXPECT_NE(error_of("float64", "Exp float64 0", {7}).find("output register 7"), std::string::npos);
  EXPECT_NE(error_of("float64", "Switch float64 0 0 0", {1}).find("bool condition"), std::string::npos);
  EXPECT_NE(error_of("complex128", "", {0}).find("unknown dtype"), std::string::npos);
}

TEST(KernelProgram, SlotsAreReusedOnceARegisterIsDead) {
  // x -> exp -> log -> sqrt: each result may take its operand's slot.
  Program p = parse_program("float64", "Exp float64 0;Log float64 1;Sqrt float64 2", {3});
  EXPECT_LE(p.num_slots, 2);  // the input's slot, and one for the chain
}

template <class T>
std::vector<T> run(const Program& p, const std::vector<ArrayArg>& inputs, size_t size) {
  std::vector<std::vector<int64_t>> shapes;
  for (const ArrayArg& a : inputs) shapes.push_back(a.shape);
  const std::vector<int64_t> shape = broadcast_shapes(shapes);
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  EXPECT_EQ(n, size);
  std::vector<T> out(n);
  evaluate(p, inputs, shape, {out.data()});
  return out;
}

TEST(KernelProgram, AWiderResultNeverOverwritesItsNarrowerOperand) {
  // switch(x < y, x, y): the bool condition dies at the Switch, whose float64
  // result must not take the condition's slot (it would overwrite c[1..7]
  // with o[0]'s bytes before reading them).
  std::vector<double> x{0.0}, y(1000);
  for (size_t i = 0; i < y.size(); ++i) y[i] = (i % 3 == 0) ? -1.0 : 2.0;
  Program p = parse_program("float64 float64", "LT bool 0 1;Switch float64 2 0 1", {3});
  auto out = run<double>(p, {{x.data(), {}}, {y.data(), {1000}}}, 1000);
  for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(out[i], y[i] > 0 ? 0.0 : y[i]) << i;
}

TEST(KernelProgram, BroadcastsLikeNumPy) {
  // (2, 3) + (3,) + (2, 1) + scalar, checked element by element; large
  // enough (3 x 700) that blocks end inside rows.
  const int64_t rows = 3, cols = 700;
  std::vector<double> a(rows * cols), b(cols), c(rows), d{0.5};
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i);
  for (size_t i = 0; i < b.size(); ++i) b[i] = 1000.0 * static_cast<double>(i);
  for (size_t i = 0; i < c.size(); ++i) c[i] = 1e7 * static_cast<double>(i + 1);
  Program p = parse_program("float64 float64 float64 float64",
                            "Add float64 0 1;Add float64 4 2;Add float64 5 3", {6});
  auto out = run<double>(p, {{a.data(), {rows, cols}}, {b.data(), {cols}}, {c.data(), {rows, 1}}, {d.data(), {}}},
                         rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < cols; ++k) {
      ASSERT_EQ(out[r * cols + k], a[r * cols + k] + b[k] + c[r] + 0.5) << r << "," << k;
    }
  }
  EXPECT_THROW(broadcast_shapes({{2, 3}, {4}}), std::invalid_argument);
  // Short rows: (700, 3) + (3,) + (700, 1), gathered in runs of 3 along the
  // innermost axis, 8-byte and 4-byte elements.
  std::vector<double> m(cols * rows), r(rows), q(cols);
  for (size_t i = 0; i < m.size(); ++i) m[i] = static_cast<double>(i);
  for (size_t i = 0; i < r.size(); ++i) r[i] = 1e6 * static_cast<double>(i + 1);
  for (size_t i = 0; i < q.size(); ++i) q[i] = 1e9 * static_cast<double>(i + 1);
  Program p3 = parse_program("float64 float64 float64", "Add float64 0 1;Add float64 3 2", {4});
  auto short_rows = run<double>(p3, {{m.data(), {cols, rows}}, {r.data(), {rows}}, {q.data(), {cols, 1}}}, rows * cols);
  for (int64_t i = 0; i < cols; ++i) {
    for (int64_t k = 0; k < rows; ++k) {
      ASSERT_EQ(short_rows[i * rows + k], m[i * rows + k] + r[k] + q[i]) << i << "," << k;
    }
  }
  std::vector<float> mf(m.begin(), m.end()), rf(r.begin(), r.end());
  Program pf = parse_program("float32 float32", "Add float32 0 1", {2});
  auto short_floats = run<float>(pf, {{mf.data(), {cols, rows}}, {rf.data(), {rows}}}, rows * cols);
  for (size_t i = 0; i < short_floats.size(); ++i) ASSERT_EQ(short_floats[i], mf[i] + rf[i % rows]) << i;
}

TEST(KernelProgram, BroadcastsOverThreeAxesForEveryElementSize) {
  // (40, 30, 3) from (30, 1), (40, 1, 3) and (1, 30, 3) operands: blocks of
  // 512 positions end inside rows and inside planes, so a block's gather
  // starts mid-row and carries from the row axis into the outer one. Each
  // element size (1, 2, 4, 8 bytes) is gathered by its own loop.
  const int64_t planes = 40, rows = 30, cols = 3;
  auto check = [&](auto tag, const char* dtype) {
    using T = decltype(tag);
    std::vector<T> column(rows), plane(planes * cols), grid(rows * cols);
    for (size_t i = 0; i < column.size(); ++i) column[i] = static_cast<T>(i % 5);
    for (size_t i = 0; i < plane.size(); ++i) plane[i] = static_cast<T>(i % 7);
    for (size_t i = 0; i < grid.size(); ++i) grid[i] = static_cast<T>(i % 11);
    const std::string d(dtype);
    Program p = parse_program(d + " " + d + " " + d, "Add " + d + " 0 1;Add " + d + " 3 2", {4});
    auto out = run<T>(p, {{column.data(), {rows, 1}}, {plane.data(), {planes, 1, cols}}, {grid.data(), {1, rows, cols}}},
                      planes * rows * cols);
    for (int64_t a = 0; a < planes; ++a) {
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          const T want = static_cast<T>(column[r] + plane[a * cols + c] + grid[r * cols + c]);
          ASSERT_EQ(out[(a * rows + r) * cols + c], want) << dtype << " " << a << "," << r << "," << c;
        }
      }
    }
  };
  check(int8_t{}, "int8");
  check(int16_t{}, "int16");
  check(int32_t{}, "int32");
  check(double{}, "float64");
}

TEST(KernelProgram, ViewsAreReadThroughTheirStrides) {
  // An Elemwise node's attribute input_axes makes inputs views (ArrayArg::
  // strides): a transposed (cols, rows) array, a (rows,) vector along axis 0
  // and a contiguous view read in place, over 3 x 700 so that blocks end
  // inside rows; checked element by element.
  const int64_t rows = 3, cols = 700;
  std::vector<double> a(rows * cols), t(cols * rows), v(rows);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i);
  for (size_t i = 0; i < t.size(); ++i) t[i] = 1e4 * static_cast<double>(i);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 1e9 * static_cast<double>(i + 1);
  Program p = parse_program("float64 float64 float64", "Add float64 0 1;Add float64 3 2", {4});
  const std::vector<int64_t> shape{rows, cols};
  for (bool in_place_view : {false, true}) {
    ArrayArg first{a.data(), shape};
    if (in_place_view) first.strides = {cols, 1};
    const std::vector<ArrayArg> in{first, {t.data(), shape, {1, rows}}, {v.data(), {rows, 1}, {1, 0}}};
    std::vector<double> out(rows * cols);
    evaluate(p, in, shape, {out.data()});
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t k = 0; k < cols; ++k) {
        ASSERT_EQ(out[r * cols + k], a[r * cols + k] + t[k * rows + r] + v[r]) << r << "," << k;
      }
    }
  }
  // A view must have the output's rank.
  std::vector<double> out(rows * cols);
  EXPECT_THROW(evaluate(p, {{a.data(), shape}, {t.data(), {cols}, {rows}}, {v.data(), {rows, 1}}}, shape, {out.data()}),
               std::invalid_argument);
}

TEST(KernelProgram, IntegerSemanticsFollowNumPy) {
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  std::vector<int64_t> a{7, -7, 7, -7, 5, kMin, kMin, 3};
  std::vector<int64_t> b{2, 2, -2, -2, 0, -1, 1, 0};
  Program div = parse_program("int64 int64", "IntDiv int64 0 1", {2});
  Program mod = parse_program("int64 int64", "Mod int64 0 1", {2});
  const std::vector<ArrayArg> in{{a.data(), {8}}, {b.data(), {8}}};
  EXPECT_EQ(run<int64_t>(div, in, 8), (std::vector<int64_t>{3, -4, -4, 3, 0, kMin, kMin, 0}));
  EXPECT_EQ(run<int64_t>(mod, in, 8), (std::vector<int64_t>{1, 1, -1, -1, 0, 0, 0, 0}));
  // Wrapping arithmetic, no undefined behaviour (the sanitizer build checks).
  Program add = parse_program("int64", "Const int64 -1;Add int64 0 1;Neg int64 0;Abs int64 0", {2, 3, 4});
  std::vector<int64_t> x{kMin};
  std::vector<int64_t> sum(1), neg(1), abs(1);
  evaluate(add, {{x.data(), {1}}}, {1}, {sum.data(), neg.data(), abs.data()});
  EXPECT_EQ(sum[0], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(neg[0], kMin);
  EXPECT_EQ(abs[0], kMin);
}

TEST(KernelProgram, FloatDivmodAndNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> a{7.5, -7.5, 7.5, 1.0, nan, 3.0};
  std::vector<double> b{2.0, 2.0, -2.0, 0.0, 1.0, nan};
  Program p = parse_program("float64 float64", "IntDiv float64 0 1;Mod float64 0 1;Maximum float64 0 1", {2, 3, 4});
  std::vector<double> q(6), r(6), m(6);
  evaluate(p, {{a.data(), {6}}, {b.data(), {6}}}, {6}, {q.data(), r.data(), m.data()});
  EXPECT_EQ(q[0], 3.0);
  EXPECT_EQ(r[0], 1.5);
  EXPECT_EQ(q[1], -4.0);
  EXPECT_EQ(r[1], 0.5);
  EXPECT_EQ(q[2], -4.0);
  EXPECT_EQ(r[2], -0.5);
  EXPECT_TRUE(std::isinf(q[3]));  // 1 // 0 = inf, as NumPy gives
  EXPECT_TRUE(std::isnan(r[3]));
  EXPECT_TRUE(std::isnan(m[4]));
  EXPECT_TRUE(std::isnan(m[5]));
}

TEST(KernelProgram, CastsOutOfRangeWithoutUndefinedBehaviour) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> x{300.0, -1.0, 1e30, -inf, std::nan(""), 2.9};
  Program p = parse_program("float64", "Cast uint8 0;Cast int32 0;Cast int64 0;Cast bool 0", {1, 2, 3, 4});
  std::vector<uint8_t> u8(6);
  std::vector<int32_t> i32(6);
  std::vector<int64_t> i64(6);
  std::vector<uint8_t> b(6);  // bool storage
  evaluate(p, {{x.data(), {6}}}, {6}, {u8.data(), i32.data(), i64.data(), b.data()});
  EXPECT_EQ(u8[0], 44);   // NumPy on x86: 300 -> 44
  EXPECT_EQ(u8[1], 255);  // -1.0 -> 255
  EXPECT_EQ(i32[2], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(i64[3], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(i64[5], 2);
  EXPECT_EQ(b[4], 1);  // NaN is true
  EXPECT_EQ(b[5], 1);
}

TEST(KernelProgram, ScalarOnlyWorkRunsOnceAndFillsTheOutput) {
  std::vector<double> x(1000, 2.0), s{3.0};
  Program p = parse_program("float64 float64", "Exp float64 1;Const float64 2;Mul float64 2 3;Add float64 4 0",
                            {4, 5});
  std::vector<double> scalar_out(1000), sum(1000);
  evaluate(p, {{x.data(), {1000}}, {s.data(), {1}}}, {1000}, {scalar_out.data(), sum.data()});
  for (size_t i = 0; i < 1000; ++i) {
    ASSERT_EQ(scalar_out[i], 2.0 * std::exp(3.0));
    ASSERT_EQ(sum[i], 2.0 * std::exp(3.0) + 2.0);
  }
}

TEST(KernelProgram, ParallelTasksGiveTheSerialResult) {
  const size_t n = (1 << 16) + 77;
  std::vector<double> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<double>(i + 1) * 1e-3;
  Program p = parse_program("float64", "GammaLn float64 0;Psi float64 0;Add float64 1 2", {3});
  std::vector<double> serial(n), parallel(n);
  evaluate(p, {{x.data(), {static_cast<int64_t>(n)}}}, {static_cast<int64_t>(n)}, {serial.data()});
  size_t tasks_run = 0;
  const ParallelFor in_reverse = [&tasks_run](size_t count, const std::function<void(size_t)>& task) {
    for (size_t t = count; t-- > 0;) {
      task(t);
      ++tasks_run;
    }
  };
  evaluate(p, {{x.data(), {static_cast<int64_t>(n)}}}, {static_cast<int64_t>(n)}, {parallel.data()}, &in_reverse);
  EXPECT_GT(tasks_run, 1u);
  EXPECT_EQ(serial, parallel);
}

TEST(KernelProgram, ThePoolRunsNodesWhoseWorkPaysForIt) {
  // The same 8,192 elements: an add stays on the calling thread; exps and
  // logs (cost ~60 adds an element) go to the pool.
  const size_t n = 8192;
  std::vector<double> x(n, 0.5), out(n);
  size_t pool_calls = 0;
  const ParallelFor counting = [&pool_calls](size_t count, const std::function<void(size_t)>& task) {
    ++pool_calls;
    for (size_t t = 0; t < count; ++t) task(t);
  };
  const std::vector<int64_t> shape{static_cast<int64_t>(n)};
  Program cheap = parse_program("float64", "Add float64 0 0", {1});
  Program costly = parse_program("float64", "Exp float64 0;Log1p float64 1;Softplus float64 2", {3});
  EXPECT_EQ(cheap.cost, 1);
  EXPECT_EQ(costly.cost, 3 * op_cost("Exp"));
  EXPECT_GT(op_cost("Hyp2F1"), op_cost("GammaLn"));
  EXPECT_GT(op_cost("GammaLn"), op_cost("Exp"));
  evaluate(cheap, {{x.data(), shape}}, shape, {out.data()}, &counting);
  EXPECT_EQ(pool_calls, 0u);
  EXPECT_EQ(out[0], 1.0);
  evaluate(costly, {{x.data(), shape}}, shape, {out.data()}, &counting);
  EXPECT_EQ(pool_calls, 1u);
  EXPECT_EQ(out[n - 1], std::log1p(std::exp(std::log1p(std::exp(0.5)))));  // softplus(log1p(exp(x)))
}

TEST(KernelProgram, OnlyTheWorkTheOutputsReadIsKept) {
  // One node per output dtype, each given the Composite's whole program: a
  // bool output's node runs no exp, log1p or softplus of the float outputs.
  Program p = parse_program("float64", "Exp float64 0;Log1p float64 1;Softplus float64 2;Const float64 0.0;GT bool 0 4",
                            {5});
  ASSERT_EQ(p.code.size(), 1u);
  EXPECT_EQ(p.cost, op_cost("GT"));
  std::vector<double> x{-1.0, 0.0, 2.0};
  std::vector<uint8_t> out(3, 7);
  const std::vector<int64_t> shape{3};
  evaluate(p, {{x.data(), shape}}, shape, {out.data()});
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 0, 1}));
  Program both = parse_program("float64", "Exp float64 0;Log1p float64 1;Softplus float64 2", {2});
  EXPECT_EQ(both.code.size(), 2u);  // the softplus is read by no output
}

TEST(KernelProgram, WorkOnScalarsAloneDoesNotSendACheapLoopToThePool) {
  // gammaln and psi of a scalar parameter (inlined into the kernel that
  // broadcasts it) run once; per element only a multiply and an add are
  // left, which stays on the calling thread. Counting every instruction's
  // cost sent it to the pool and made it slower.
  const size_t n = 8192;
  std::vector<double> x(n, 0.5), s{2.5}, out(n);
  size_t pool_calls = 0;
  const ParallelFor counting = [&pool_calls](size_t count, const std::function<void(size_t)>& task) {
    ++pool_calls;
    for (size_t t = 0; t < count; ++t) task(t);
  };
  Program p = parse_program("float64 float64", "GammaLn float64 1;Psi float64 1;Mul float64 0 2;Add float64 4 3", {5});
  evaluate(p, {{x.data(), {static_cast<int64_t>(n)}}, {s.data(), {}}}, {static_cast<int64_t>(n)}, {out.data()},
           &counting);
  EXPECT_EQ(pool_calls, 0u);
  const double psi_2_5 = 0.7031566406452432;  // digamma(2.5), SciPy
  for (size_t i : {size_t{0}, n - 1}) EXPECT_NEAR(out[i], 0.5 * std::lgamma(2.5) + psi_2_5, 1e-15);
}

TEST(KernelProgram, SummedOutputsAddEveryPosition) {
  // Output 0 written per position, output 1 summed; a broadcast scalar input.
  Program p = parse_program("float64 float64", "Mul float64 0 1;Add float64 2 0", {2, 3});
  set_output_reductions(p, {0, 1});
  const size_t n = 1000;
  std::vector<double> x(n), scale{3.0};
  for (size_t i = 0; i < n; ++i) x[i] = 1.0 / static_cast<double>(i + 1);
  std::vector<double> written(n), terms(n);
  double summed = -1.0;
  evaluate(p, {{x.data(), {static_cast<int64_t>(n)}}, {scale.data(), {1}}}, {static_cast<int64_t>(n)},
           {written.data(), &summed});
  double sequential = 0.0;  // a loop, as PyTensor's C backend sums
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(written[i], 3.0 * x[i]);
    terms[i] = 3.0 * x[i] + x[i];
    sequential += terms[i];
  }
  EXPECT_EQ(summed, 0.0 + numpy_sum(terms.data(), n));  // pairwise, as NumPy
  EXPECT_NE(summed, sequential);                        // (the order shows here)
  // A sequential sum (a Scan's running total) adds in position order.
  set_output_reductions(p, {0, 4});
  evaluate(p, {{x.data(), {static_cast<int64_t>(n)}}, {scale.data(), {1}}}, {static_cast<int64_t>(n)},
           {written.data(), &summed});
  EXPECT_EQ(summed, sequential);

  // Over an empty array the sum is 0; a summed output must be float64.
  double empty_sum = -1.0;
  std::vector<double> none;
  evaluate(p, {{x.data(), {0}}, {scale.data(), {1}}}, {0}, {none.data(), &empty_sum});
  EXPECT_EQ(empty_sum, 0.0);
  Program ints = parse_program("int64", "Neg int64 0", {1});
  EXPECT_THROW(set_output_reductions(ints, {1}), std::invalid_argument);
  EXPECT_THROW(set_output_reductions(p, {1}), std::invalid_argument);  // one flag per output
}

TEST(KernelProgram, AllAndAnyOutputsReduceEveryPosition) {
  // all(x < t) and any(x < t) over a large array (several parallel tasks),
  // with the one position that decides them first, in the middle and last,
  // or nowhere; a scalar threshold.
  const size_t n = (1 << 16) + 77;
  Program p = parse_program("float64 float64", "LT bool 0 1", {2, 2});
  set_output_reductions(p, {2, 3});  // All, Any
  const ParallelFor parallel = [](size_t count, const std::function<void(size_t)>& task) {
    for (size_t t = count; t-- > 0;) task(t);
  };
  const std::vector<int64_t> shape{static_cast<int64_t>(n)};
  for (const ParallelFor* pool : {static_cast<const ParallelFor*>(nullptr), &parallel}) {
    for (const size_t special : {size_t{0}, n / 2, n - 1, n}) {
      std::vector<double> x(n, 1.0);
      if (special < n) x[special] = -1.0;
      // below 0: one element holds, so all() fails and any() holds; below 2 every element holds.
      for (const double threshold : {0.0, 2.0}) {
        bool all = !threshold, any = !threshold;
        evaluate(p, {{x.data(), shape}, {&threshold, {}}}, shape, {&all, &any}, pool);
        const bool one = special < n;
        EXPECT_EQ(all, threshold == 2.0) << special;
        EXPECT_EQ(any, threshold == 2.0 || one) << special;
      }
    }
  }
  // Over an empty array all() holds and any() does not; All and Any take
  // bools only, Sum float64 only.
  bool all = false, any = true;
  const double threshold = 0.0;
  std::vector<double> none;
  evaluate(p, {{none.data(), {0}}, {&threshold, {}}}, {0}, {&all, &any});
  EXPECT_TRUE(all);
  EXPECT_FALSE(any);
  EXPECT_THROW(set_output_reductions(p, {1, 0}), std::invalid_argument);
  Program floats = parse_program("float64", "Exp float64 0", {1});
  EXPECT_THROW(set_output_reductions(floats, {2}), std::invalid_argument);
  EXPECT_THROW(set_output_reductions(floats, {7}), std::invalid_argument);
}

TEST(KernelProgram, SummedOutputsHaveTheSameBitsWhateverThePool) {
  const size_t n = (1 << 16) + 77;
  std::vector<double> x(n), terms(n);
  for (size_t i = 0; i < n; ++i) x[i] = std::sin(static_cast<double>(i));
  Program p = parse_program("float64", "Exp float64 0", {1});
  set_output_reductions(p, {1});
  const ParallelFor forward = [](size_t count, const std::function<void(size_t)>& task) {
    for (size_t t = 0; t < count; ++t) task(t);
  };
  const ParallelFor in_reverse = [](size_t count, const std::function<void(size_t)>& task) {
    for (size_t t = count; t-- > 0;) task(t);
  };
  double a = 0, b = 0, serial = 0;
  const std::vector<int64_t> shape{static_cast<int64_t>(n)};
  evaluate(p, {{x.data(), shape}}, shape, {&a}, &forward);
  evaluate(p, {{x.data(), shape}}, shape, {&b}, &in_reverse);
  evaluate(p, {{x.data(), shape}}, shape, {&serial});
  for (size_t i = 0; i < n; ++i) terms[i] = std::exp(x[i]);
  const double expected = 0.0 + numpy_sum(terms.data(), n);
  EXPECT_EQ(a, expected);
  EXPECT_EQ(b, expected);
  EXPECT_EQ(serial, expected);
}

TEST(KernelProgram, SummedOutputsAddChunksInOrderWhereNumPyDoes) {
  // NumPy 2.0 adds pairwise within chunks of its buffer size, the chunks'
  // sums in order (attribute `sum_chunk`); here chunks of 8 over 20 values.
  Program p = parse_program("float64", "Mul float64 0 0", {1});
  set_output_reductions(p, {1});
  p.sum_chunk = 8;
  std::vector<double> x(20), squares(20);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = i == 0 ? 1e8 : 1.0 + 1e-3 * static_cast<double>(i);
    squares[i] = x[i] * x[i];
  }
  double summed = -1.0;
  evaluate(p, {{x.data(), {20}}}, {20}, {&summed});
  double expected = 0.0;
  expected += numpy_sum(squares.data(), 8);
  expected += numpy_sum(squares.data() + 8, 8);
  expected += numpy_sum(squares.data() + 16, 4);
  EXPECT_EQ(summed, expected);
  EXPECT_NE(summed, 0.0 + numpy_sum(squares.data(), 20));  // (the chunks show here)
}

TEST(KernelProgram, LargeSumsAddedBlockByBlockKeepNumPysTree) {
  // From 2^15 positions a pairwise sum is added block by block (evaluate.cc
  // kSumsInBlocksMin): blocks of whole leaves of NumPy's tree. With NumPy
  // 2.0's chunks (the last one 5 values: a leaf of fewer than 8), beside a
  // position-order sum, an all() and a summed constant (one value per
  // block, filled), on the pool's tasks in reverse order.
  const size_t n = 3 * 8192 + 5 + 33000;  // (>= 2^15; halves that are not multiples of 16)
  std::vector<double> x(n), terms(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = std::sin(static_cast<double>(i)) + 1e-3 * std::cos(3.0 * static_cast<double>(i));
    terms[i] = std::exp(x[i]);
  }
  const ParallelFor in_reverse = [](size_t count, const std::function<void(size_t)>& task) {
    for (size_t t = count; t-- > 0;) task(t);
  };
  for (int64_t chunk : {int64_t{0}, int64_t{8192}}) {
    Program p = parse_program("float64", "Exp float64 0;Const float64 0.1;GE bool 1 1", {1, 0, 2, 3});
    set_output_reductions(p, {1, 4, 1, 2});
    p.sum_chunk = chunk;
    double sum_terms = -1, in_order = -1, sum_tenths = -1;
    bool all_nonnegative = false;
    const std::vector<int64_t> shape{static_cast<int64_t>(n)};
    evaluate(p, {{x.data(), shape}}, shape, {&sum_terms, &in_order, &sum_tenths, &all_nonnegative}, &in_reverse);
    const size_t step = chunk > 0 ? static_cast<size_t>(chunk) : n;
    const std::vector<double> tenths(n, 0.1);
    double expected_terms = 0.0, expected_tenths = 0.0, expected_in_order = 0.0;
    for (size_t start = 0; start < n; start += step) {
      expected_terms += numpy_sum(terms.data() + start, std::min(step, n - start));
      expected_tenths += numpy_sum(tenths.data() + start, std::min(step, n - start));
    }
    for (double v : x) expected_in_order += v;
    EXPECT_EQ(sum_terms, expected_terms) << chunk;
    EXPECT_EQ(sum_tenths, expected_tenths) << chunk;
    EXPECT_EQ(in_order, expected_in_order) << chunk;
    EXPECT_TRUE(all_nonnegative);
  }
}

TEST(KernelProgram, NumpySumAddsPairwise) {
  // Worked by hand (NumPy's add.reduce gives the same): 1e16 + 1 rounds to
  // 1e16, so the order decides what survives.
  // Nine values: eight running sums (1e16, 1, ..., 1) combine to 1e16 + 6,
  // then -1e16 is added: 6. In order every 1 is lost: 0.
  std::vector<double> nine{1e16, 1, 1, 1, 1, 1, 1, 1, -1e16};
  EXPECT_EQ(numpy_sum(nine.data(), nine.size()), 6.0);
  // Twenty: the running sums take two values each (1e16 + 1 -> 1e16, and
  // 2s), combine to 1e16 + 14, then -1e16, 1, 1, 1 are added in order: 17.
  std::vector<double> twenty{1e16};
  twenty.insert(twenty.end(), 15, 1.0);
  twenty.push_back(-1e16);
  twenty.insert(twenty.end(), 3, 1.0);
  EXPECT_EQ(numpy_sum(twenty.data(), twenty.size()), 17.0);
  // Fewer than eight: in order.
  std::vector<double> five{1e16, 1, 1, 1, -1e16};
  EXPECT_EQ(numpy_sum(five.data(), five.size()), 0.0);
  EXPECT_EQ(numpy_sum(nullptr, 0), 0.0);
}

namespace {
double fake_erfcx(double x, int) { return 2.0 * x; }
}  // namespace

TEST(KernelOps, SciPysFunctionsAreOpsOnlyOnceSet) {
  // Each GoogleTest case runs in a process of its own (gtest_discover_tests).
  EXPECT_EQ(describe_ops().find("Erfcx "), std::string::npos);
  try {
    parse_program("float64", "Erfcx float64 0", {1});
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("Erfcx is evaluated by SciPy's function"), std::string::npos) << e.what();
  }
  EXPECT_NE(scipy_special::missing_functions().find("erfcx"), std::string::npos);
  ASSERT_TRUE(scipy_special::set_function("erfcx", reinterpret_cast<void*>(&fake_erfcx)));
  EXPECT_FALSE(scipy_special::set_function("nothing", reinterpret_cast<void*>(&fake_erfcx)));
  EXPECT_NE(describe_ops().find("Erfcx 1 same float32,float64;"), std::string::npos);
  Program p = parse_program("float32", "Erfcx float32 0", {1});
  std::vector<float> x{1.5f, -2.0f}, y(2);
  evaluate(p, {{x.data(), {2}}}, {2}, {y.data()});
  EXPECT_EQ(y, (std::vector<float>{3.0f, -4.0f}));  // through the function, in float64, rounded
}

TEST(KernelProgram, PlansFollowWhichInputsHoldOneElement) {
  // What a run decides from its one-element inputs is kept per set of them
  // (run_plan.h): the 63 sets of six inputs with one array among them, twice (the second
  // time from the kept plans, which hold 32; the rest are made again), and a
  // copy of the program, which starts without plans. A plan of another set
  // would read a 3-element input as one value, or one value as 3.
  Program p = parse_program("float64 float64 float64 float64 float64 float64",
                            "Mul float64 0 1;Add float64 6 2;Mul float64 7 3;Sub float64 8 4;Add float64 9 5", {10});
  const std::vector<double> wide[6] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {-1, 0.5, 2}, {3, 1, 4}, {1, 5, 9}};
  for (int round = 0; round < 2; ++round) {
    for (int mask = 0; mask < 63; ++mask) {  // (63: all six alone, one element out)
      std::vector<ArrayArg> inputs;
      for (int i = 0; i < 6; ++i) {
        if (mask & (1 << i)) inputs.push_back({&wide[i][0], {1}});  // its first element, alone
        else inputs.push_back({wide[i].data(), {3}});
      }
      const std::vector<double> got = run<double>(p, inputs, 3);
      for (size_t k = 0; k < 3; ++k) {
        auto at = [&](int i) { return wide[i][(mask & (1 << i)) ? 0 : k]; };
        EXPECT_EQ(got[k], (at(0) * at(1) + at(2)) * at(3) - at(4) + at(5)) << "set " << mask << ", position " << k;
      }
    }
  }
  const Program copy = p;
  const std::vector<ArrayArg> all_wide = {{wide[0].data(), {3}}, {wide[1].data(), {3}}, {wide[2].data(), {3}},
                                          {wide[3].data(), {3}}, {wide[4].data(), {3}}, {wide[5].data(), {3}}};
  EXPECT_EQ(run<double>(copy, all_wide, 3)[2], (3.0 * 6 + 9) * 2 - 4 + 9);
}

TEST(KernelProgram, EmptyArraysRunNothing) {
  Program p = parse_program("float64", "Exp float64 0", {1});
  std::vector<double> input{1.0}, sentinel{-1.0};
  evaluate(p, {{input.data(), {0, 3}}}, {0, 3}, {sentinel.data()});
  EXPECT_EQ(sentinel[0], -1.0);  // nothing written
}

TEST(KernelOps, DescriptionListsEveryOpOnce) {
  const std::string text = describe_ops();
  EXPECT_NE(text.find("Add 2 same "), std::string::npos);
  EXPECT_NE(text.find("GammaLn 1 same float32,float64;"), std::string::npos);
  EXPECT_NE(text.find("Switch 3 switch "), std::string::npos);
  EXPECT_EQ(text.find("Add 2", text.find("Add 2") + 1), std::string::npos);
}

}  // namespace
}  // namespace pytensor_onnx::kernels
