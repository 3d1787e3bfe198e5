// Sorting, binary search and prefix products with NumPy's semantics.
//
// Stable order. ONNX's TopK (opset 11 on) breaks ties by index, the lower
// index first, when it returns the whole axis sorted; that is a stable sort
// of everything but NaN, whose comparisons are all false, so ONNX Runtime
// places NaN anywhere. NumPy sorts NaN last. The recipe sorts twice, stably:
// first the values with NaN read as +inf, then that order by "is NaN" (0 or
// 1). The second pass moves every NaN behind every number, +inf included,
// and keeps each group's order, so the result is NumPy's stable order (equal
// values, -0.0 and +0.0 included, keep their input order).
//
// Binary search (searchsorted) runs in a Loop over all query values at once:
// each iteration halves every [lo, hi) interval, so ceil(log2(n + 1))
// iterations finish; the loop stops as soon as every interval is empty.
// Comparisons order NaN after every number, as NumPy's sort does.
//
// Unique values (np.unique): the stable sort groups equal values, NaN
// included (NumPy's equal_nan); a group starts where a value differs from
// the one before it. The first element of a group in the stable order is the
// value's first occurrence in the input.
//
// Unique rows (np.unique(axis=...) after moving the axis first and
// flattening the rest): NumPy views each row as one structured element and
// sorts them field by field, so rows are ordered lexicographically, each
// column in NumPy's sort order (NaN after numbers), stably when return_index
// is asked. The recipe sorts stably by every column from the last to the
// first (a least-significant-first radix sort), which gives that order. Two
// rows are equal when every column compares equal, so a row holding NaN
// equals no other row (structured equality has no equal_nan): it forms its
// own group, as in NumPy.
//
// Prefix products: CumProd exists from opset 26. Before, the product is a
// log-depth (Hillis-Steele) scan: step s multiplies each element by the one
// s places before it (1 where there is none), for s = 1, 2, 4, ...
#include <limits>
#include <vector>

#include "build_helpers.h"
#include "recipes.h"
#include "errors.h"
#include "registry.h"

namespace pytensor_onnx::recipes {
namespace {

// The indices TopK gives for sorting `keys` ascending along `axis`.
Value* topk_order(GraphBuilder& g, Value* keys, Value* length, int64_t axis) {
  return g.op("TopK", {keys, length}, {{"axis", axis}, {"largest", int64_t{0}}, {"sorted", int64_t{1}}}, 2)[1];
}

// a < b in NumPy's sort order (NaN after everything, NaN == NaN).
Value* sort_less(GraphBuilder& g, Value* a, Value* b) {
  Value* less = g.op1("Less", {a, b});
  if (!is_float(a->dtype)) return less;
  Value* nan_after_number = g.op1("And", {g.op1("IsNaN", {b}), g.op1("Not", {g.op1("IsNaN", {a})})});
  return g.op1("Or", {less, nan_after_number});
}

}  // namespace

namespace {

Value* argsort_nonempty(GraphBuilder& g, Value* x, int64_t axis) {
  Value* length = axis_length(g, x, axis);
  // TopK has no bool kernel (the spec excludes bool); False < True as 0 < 1.
  if (x->dtype == DType::Bool) x = g.cast(x, DType::Int32);
  if (!is_float(x->dtype)) return topk_order(g, x, length, axis);
  Value* is_nan = g.op1("IsNaN", {x});
  Value* inf = g.cast(g.scalar(DType::Float64, std::numeric_limits<double>::infinity()), x->dtype);
  Value* by_value = topk_order(g, g.op1("Where", {is_nan, inf, x}), length, axis);
  Value* nan_in_order = g.op1("GatherElements", {g.cast(is_nan, DType::Int32), by_value}, {{"axis", axis}});
  Value* nan_last = topk_order(g, nan_in_order, length, axis);
  return g.op1("GatherElements", {by_value, nan_last}, {{"axis", axis}});
}

// Whether an axis other than `axis` may have length 0.
bool other_axis_may_be_empty(const Value* x, int64_t axis) {
  for (size_t a = 0; a < x->shape->size(); ++a) {
    const Dim& d = (*x->shape)[a];
    if (static_cast<int64_t>(a) != axis && (!d.is_known() || d.size == 0)) return true;
  }
  return false;
}

}  // namespace

Value* argsort_stable(GraphBuilder& g, Value* x, int64_t axis) {
  axis = checked_axis(x, axis, "argsort_stable");
  if (!other_axis_may_be_empty(x, axis)) return argsort_nonempty(g, x, axis);
  // ONNX Runtime 1.21's TopK divides by zero (SIGFPE) when another axis is
  // empty and K > 0: an empty input takes a branch without TopK (one If for
  // the whole recipe; its TopKs are not guarded again, builds_for_nonempty_input).
  GraphBuilder empty(g, "empty_order");
  empty.output(empty.op1("ConstantOfShape", {empty.op1("Shape", {x})}, {{"value", Tensor::int64s({0})}}), "empty_order");
  GraphBuilder sorting(g, "stable_order");
  sorting.output(argsort_nonempty(sorting, x, axis), "stable_order");
  Value* is_empty = g.op1("Equal", {g.op1("Size", {x}), int64_scalar(g, 0)});
  return g.op("If", {is_empty}, {{"then_branch", empty.shared_graph()}, {"else_branch", sorting.shared_graph()}}, 1)[0];
}

bool builds_for_nonempty_input(const GraphBuilder& g) {
  const std::string& name = g.graph().name();
  return name == kNonemptyBranch || name == "stable_order";
}

std::optional<std::vector<Value*>> topk_guarding_empty(GraphBuilder& g, const std::vector<Value*>& inputs,
                                                       const Attributes& attrs) {
  // Anything unusual (a missing or non-int64-vector K, an unknown rank, a bad
  // axis) goes the ordinary way, which reports it.
  if (inputs.size() != 2 || !inputs[0] || !inputs[1] || builds_for_nonempty_input(g)) return std::nullopt;
  Value* x = inputs[0];
  Value* k = inputs[1];
  if (!x->rank() || *x->rank() == 0 || k->dtype != DType::Int64 || !k->rank() || *k->rank() != 1) return std::nullopt;
  const auto rank = static_cast<int64_t>(*x->rank());
  int64_t axis = attrs.get_int("axis", -1);
  if (axis < -rank || axis >= rank) return std::nullopt;
  if (axis < 0) axis += rank;
  if (!other_axis_may_be_empty(x, axis)) return std::nullopt;

  // ONNX Runtime 1.21's TopK crashes the process (SIGSEGV/SIGFPE: it
  // divides by the number of rows) when an axis other than `axis` is empty
  // and K > 0 (docs/testing.md). Such an input takes a branch without TopK;
  // its results are empty, of TopK's shape. K larger than the axis still
  // goes to TopK, which reports it.
  GraphBuilder sorting(g, kNonemptyBranch);
  auto found = sorting.op("TopK", {x, k}, attrs, 2);
  sorting.output(found[0], "topk_values");
  sorting.output(found[1], "topk_indices");

  GraphBuilder empty(g, "topk_empty");
  Value* values = empty.op1("Slice", {x, empty.int64s({0}), k, empty.int64s({axis})});
  Value* indices = empty.op1("ConstantOfShape", {empty.op1("Shape", {values})}, {{"value", Tensor::int64s({0})}});
  // This branch runs only when the axis holds at least K elements: its
  // results have TopK's shape (what Slice's inference cannot know).
  values->shape = found[0]->shape;
  indices->shape = found[0]->shape;
  empty.output(values, "topk_empty_values");
  empty.output(indices, "topk_empty_indices");

  Value* no_elements = g.op1("Equal", {g.op1("Size", {x}), int64_scalar(g, 0)});
  Value* k_fits = g.op1("Squeeze", {g.op1("GreaterOrEqual", {axis_length(g, x, axis), k})},
                        {{"axes", std::vector<int64_t>{0}}});
  Value* take_empty = g.op1("And", {no_elements, k_fits});
  return g.op("If", {take_empty}, {{"then_branch", empty.shared_graph()}, {"else_branch", sorting.shared_graph()}}, 2);
}

Value* sort_stable(GraphBuilder& g, Value* x, int64_t axis) {
  axis = checked_axis(x, axis, "sort_stable");
  return g.op1("GatherElements", {x, argsort_stable(g, x, axis)}, {{"axis", axis}});
}

Value* searchsorted(GraphBuilder& g, Value* sorted, Value* v, bool right) {
  if (!sorted->rank() || *sorted->rank() != 1) throw BuildError("searchsorted: the sorted input must be 1-D");
  if (sorted->dtype != v->dtype) {
    throw BuildError("searchsorted: the sorted array and the values must have one dtype (cast them first)");
  }
  if (sorted->dtype == DType::Bool) {
    sorted = g.cast(sorted, DType::UInt8);
    v = g.cast(v, DType::UInt8);
  }
  Value* n = g.op1("Squeeze", {axis_length(g, sorted, 0)}, {{"axes", std::vector<int64_t>{0}}});
  Value* zero = int64_scalar(g, 0);
  Value* v_shape = g.op1("Shape", {v});
  Value* lo = g.op1("Expand", {zero, v_shape});
  Value* hi = g.op1("Expand", {n, v_shape});
  // Nothing to search: the answer is 0 (lo) everywhere, and the body's
  // Gather must not read an empty array.
  Value* start = g.op1("And", {g.op1("Greater", {n, zero}), g.op1("Greater", {g.op1("Size", {v}), zero})});

  GraphBuilder body(g, "binary_search");
  body.input("iteration", DType::Int64, shape_of_sizes({}));
  body.input("condition", DType::Bool, shape_of_sizes({}));
  const Shape any_shape = v->rank() ? unknown_dims(*v->rank()) : Shape{};
  Value* b_lo = body.input("lo", DType::Int64, any_shape);
  Value* b_hi = body.input("hi", DType::Int64, any_shape);
  Value* active = body.op1("Less", {b_lo, b_hi});
  Value* mid = body.op1("Div", {body.op1("Add", {b_lo, b_hi}), int64_scalar(body, 2)});
  // Finished intervals may sit at n; read a valid element there (unused).
  Value* last = body.op1("Sub", {n, int64_scalar(body, 1)});
  Value* at_mid = body.op1("Gather", {sorted, body.op1("Min", {mid, last})}, {{"axis", int64_t{0}}});
  // left: the answer is past mid when sorted[mid] < v; right: when not v < sorted[mid].
  Value* past_mid = right ? body.op1("Not", {sort_less(body, v, at_mid)}) : sort_less(body, at_mid, v);
  Value* move_lo = body.op1("And", {active, past_mid});
  Value* move_hi = body.op1("And", {active, body.op1("Not", {past_mid})});
  Value* next_lo = body.op1("Where", {move_lo, body.op1("Add", {mid, int64_scalar(body, 1)}), b_lo});
  Value* next_hi = body.op1("Where", {move_hi, mid, b_hi});
  Value* open = body.op1("Cast", {body.op1("Less", {next_lo, next_hi})}, {{"to", static_cast<int64_t>(DType::Int32)}});
  Value* more = body.op1("Greater", {body.op1("ReduceMax", {open}, {{"keepdims", int64_t{0}}}),
                                     body.scalar(DType::Int32, 0)});
  body.output(more, "more");
  body.output(next_lo, "next_lo");
  body.output(next_hi, "next_hi");
  // 64 halvings cover any length an int64 can count; `more` ends it sooner.
  auto found = g.op("Loop", {int64_scalar(g, 64), start, lo, hi}, {{"body", body.shared_graph()}}, 2);
  return found[0];
}

Value* cumprod(GraphBuilder& g, Value* x, int64_t axis) {
  axis = checked_axis(x, axis, "cumprod");
  const DType dtype = x->dtype;
  // CumProd's types start at 32 bits; narrower products keep their low bits
  // in int32. bool: the product of 0s and 1s is their AND.
  const bool narrow = dtype == DType::Bool || dtype == DType::Int8 || dtype == DType::UInt8 ||
                      dtype == DType::Int16 || dtype == DType::UInt16;
  if (g.opset() >= 26) {
    Value* product = g.op1("CumProd", {narrow ? g.cast(x, DType::Int32) : x, int64_scalar(g, axis)});
    return g.cast(product, dtype);
  }
  Value* y = dtype == DType::Bool ? g.cast(x, DType::Int32) : x;
  const int64_t rank = static_cast<int64_t>(*x->rank());
  Value* one = g.cast(g.scalar(DType::Int64, 1), y->dtype);
  // y * (y shifted by `shift` along the axis, 1s shifted in); shift is a 1-element int64 vector.
  auto step = [&](GraphBuilder& b, Value* current, Value* shift) {
    Value* length = axis_length(b, current, axis);
    Value* kept = b.op1("Sub", {length, shift});
    Value* head = b.op1("Slice", {current, b.int64s({0}), b.op1("Max", {kept, b.int64s({0})}), b.int64s({axis})});
    std::vector<Value*> pad_parts;
    if (axis > 0) pad_parts.push_back(b.int64s(std::vector<int64_t>(axis, 0)));
    pad_parts.push_back(b.op1("Min", {shift, length}));
    pad_parts.push_back(b.int64s(std::vector<int64_t>(2 * rank - axis - 1, 0)));
    Value* pads = b.op1("Concat", pad_parts, {{"axis", int64_t{0}}});
    return b.op1("Mul", {current, b.op1("Pad", {head, pads, one})});
  };
  if (x->shape && (*x->shape)[axis].is_known()) {
    const int64_t n = (*x->shape)[axis].size;
    for (int64_t shift = 1; shift < n; shift *= 2) y = step(g, y, g.int64s({shift}));
  } else {
    GraphBuilder body(g, "prefix_product");
    body.input("iteration", DType::Int64, shape_of_sizes({}));
    body.input("condition", DType::Bool, shape_of_sizes({}));
    Value* current = body.input("partial", y->dtype, unknown_dims(static_cast<size_t>(rank)));
    Value* shift = body.input("shift", DType::Int64, shape_of_sizes({1}));
    Value* next = step(body, current, shift);
    Value* next_shift = body.op1("Mul", {shift, body.int64s({2})});
    Value* more = body.op1("Less", {next_shift, axis_length(body, current, axis)});
    body.output(body.op1("Squeeze", {more}, {{"axes", std::vector<int64_t>{0}}}), "more");
    body.output(next, "scanned");
    body.output(next_shift, "next_shift");
    Value* start = g.op1("Squeeze", {g.op1("Greater", {axis_length(g, y, axis), g.int64s({1})})},
                         {{"axes", std::vector<int64_t>{0}}});
    y = g.op("Loop", {int64_scalar(g, 64), start, y, g.int64s({1})}, {{"body", body.shared_graph()}}, 2)[0];
  }
  return dtype == DType::Bool ? g.cast(y, DType::Bool) : y;
}

namespace {

// Stable lexicographic order of the rows of a 2-D x (see the top comment).
Value* lexicographic_row_order(GraphBuilder& g, Value* rows) {
  Value* n = g.op1("Squeeze", {axis_length(g, rows, 0)}, {{"axes", std::vector<int64_t>{0}}});
  Value* order = g.op1("Range", {int64_scalar(g, 0), n, int64_scalar(g, 1)});
  // Reorders `current` stably by column `column` (an int64 scalar) of the rows.
  auto sort_by_column = [&](GraphBuilder& b, Value* current, Value* column) {
    Value* keys = b.op1("Gather", {b.op1("Gather", {rows, column}, {{"axis", int64_t{1}}}), current},
                        {{"axis", int64_t{0}}});
    return b.op1("Gather", {current, argsort_stable(b, keys, 0)}, {{"axis", int64_t{0}}});
  };
  const Dim& columns = (*rows->shape)[1];
  constexpr int64_t kMostUnrolledColumns = 8;
  if (columns.is_known() && columns.size <= kMostUnrolledColumns) {
    for (int64_t column = columns.size - 1; column >= 0; --column) order = sort_by_column(g, order, int64_scalar(g, column));
    return order;
  }
  Value* m = g.op1("Squeeze", {axis_length(g, rows, 1)}, {{"axes", std::vector<int64_t>{0}}});
  GraphBuilder body(g, "sort_by_column");
  Value* step = body.input("step", DType::Int64, shape_of_sizes({}));
  Value* condition = body.input("condition", DType::Bool, shape_of_sizes({}));
  Value* current = body.input("order", DType::Int64, unknown_dims(1));
  Value* column = body.op1("Sub", {body.op1("Sub", {m, step}), int64_scalar(body, 1)});
  body.output(body.op1("Identity", {condition}), "more");
  body.output(sort_by_column(body, current, column), "next_order");
  Value* start = g.cast(g.scalar(DType::Int64, 1), DType::Bool);
  return g.op("Loop", {m, start, order}, {{"body", body.shared_graph()}}, 1)[0];
}

}  // namespace

std::vector<Value*> unique(GraphBuilder& g, Value* x) {
  const bool rows = x->rank() && *x->rank() == 2;
  if (!x->rank() || (*x->rank() != 1 && !rows)) {
    throw BuildError("unique: the input must be 1-D, or 2-D for unique rows (flatten it first)");
  }
  Value* order = rows ? lexicographic_row_order(g, x) : argsort_stable(g, x, 0);
  Value* sorted = g.op1("Gather", {x, order}, {{"axis", int64_t{0}}});
  Value* n = axis_length(g, x, 0);
  Value* end = g.int64s({std::numeric_limits<int64_t>::max()});
  Value* current = g.op1("Slice", {sorted, g.int64s({1}), end, g.int64s({0})});
  Value* previous = g.op1("Slice", {sorted, g.int64s({0}), g.int64s({-1}), g.int64s({0})});
  Value* differs = g.op1("Not", {g.op1("Equal", {current, previous})});
  if (rows) {
    // A row differs when any column does (none for rows of no columns).
    Value* columns_differing = g.op1("ReduceSum", {g.cast(differs, DType::Int64), g.int64s({1})},
                                     {{"keepdims", int64_t{0}}});
    differs = g.op1("Greater", {columns_differing, int64_scalar(g, 0)});
  } else if (is_float(x->dtype)) {
    Value* both_nan = g.op1("And", {g.op1("IsNaN", {current}), g.op1("IsNaN", {previous})});
    differs = g.op1("And", {differs, g.op1("Not", {both_nan})});
  }
  // The first element starts a group (cut to length n, 0 when x is empty).
  Value* true_vector = g.cast(g.int64s({1}), DType::Bool);
  Value* starts_group = g.op1("Slice", {g.op1("Concat", {true_vector, differs}, {{"axis", int64_t{0}}}), g.int64s({0}), n});
  Value* positions = g.op1("Range", {int64_scalar(g, 0), g.op1("Squeeze", {n}, {{"axes", std::vector<int64_t>{0}}}),
                                     int64_scalar(g, 1)});
  Value* starts = g.op1("Compress", {positions, starts_group}, {{"axis", int64_t{0}}});
  Value* values = g.op1("Gather", {sorted, starts}, {{"axis", int64_t{0}}});
  Value* first = g.op1("Gather", {order, starts}, {{"axis", int64_t{0}}});
  Value* group = g.op1("Sub", {g.op1("CumSum", {g.cast(starts_group, DType::Int64), int64_scalar(g, 0)}),
                               int64_scalar(g, 1)});
  Value* inverse = g.op1("ScatterElements", {group, order, group}, {{"axis", int64_t{0}}});
  Value* bounds = g.op1("Concat", {starts, n}, {{"axis", int64_t{0}}});
  Value* counts = g.op1("Sub", {g.op1("Slice", {bounds, g.int64s({1}), end}),
                                g.op1("Slice", {bounds, g.int64s({0}), g.int64s({-1})})});
  return {values, first, inverse, counts};
}

namespace {

std::vector<Value*> unique_recipe(GraphBuilder& g, const std::vector<Value*>& in, const Attributes&) {
  return unique(g, in[0]);
}

std::vector<Value*> argsort_recipe(GraphBuilder& g, const std::vector<Value*>& in, const Attributes& attrs) {
  return {argsort_stable(g, in[0], attrs.get_int("axis", -1))};
}

std::vector<Value*> sort_recipe(GraphBuilder& g, const std::vector<Value*>& in, const Attributes& attrs) {
  return {sort_stable(g, in[0], attrs.get_int("axis", -1))};
}

std::vector<Value*> searchsorted_recipe(GraphBuilder& g, const std::vector<Value*>& in, const Attributes& attrs) {
  return {searchsorted(g, in[0], in[1], attrs.get_int("right", 0) != 0)};
}

std::vector<Value*> cumprod_recipe(GraphBuilder& g, const std::vector<Value*>& in, const Attributes& attrs) {
  return {cumprod(g, in[0], attrs.get_int("axis", 0))};
}

}  // namespace

void add_sort_recipes(std::vector<RecipeInfo>& table) {
  table.push_back({"argsort_stable", argsort_recipe, 1, 1,
                   "indices sorting x along `axis`, stable, NaN last (NumPy's kind='stable'); any dtype"});
  table.push_back({"sort_stable", sort_recipe, 1, 1, "x sorted along `axis`, NaN last (np.sort); any dtype"});
  table.push_back({"searchsorted", searchsorted_recipe, 2, 2,
                   "np.searchsorted(sorted, v, side='right' if `right` else 'left'); one dtype, NaN sorts last"});
  table.push_back({"unique", unique_recipe, 1, 1,
                   "np.unique of a 1-D x: (values, first index, inverse, counts), NaNs form one group; of a 2-D x, "
                   "unique rows in lexicographic order (np.unique(axis=0)), a row with NaN is its own group"});
  table.push_back({"cumprod", cumprod_recipe, 1, 1,
                   "np.cumprod along `axis` in x's dtype (integers wrap); CumProd from opset 26"});
}

}  // namespace pytensor_onnx::recipes
