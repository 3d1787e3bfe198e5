#include <gtest/gtest.h>

#include <memory>

#include "dtype.h"
#include "errors.h"
#include "tensor.h"

namespace pytensor_onnx {
namespace {

TEST(DType, NamesRoundTrip) {
  for (const char* name : {"float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                           "uint64", "bool", "float16"}) {
    EXPECT_EQ(dtype_name(dtype_from_name(name)), name);
  }
  EXPECT_THROW(dtype_from_name("complex128"), std::invalid_argument);
}

TEST(DType, SizesAndKinds) {
  EXPECT_EQ(dtype_size(DType::Bool), 1u);
  EXPECT_EQ(dtype_size(DType::Float64), 8u);
  EXPECT_EQ(static_cast<int>(DType::Float64), 11);  // ONNX TensorProto code
  EXPECT_TRUE(is_unsigned_integer(DType::UInt64));
  EXPECT_FALSE(is_integer(DType::Bool));
  EXPECT_TRUE(is_float(DType::Float16));
}

TEST(Tensor, Int64ValuesAndContent) {
  Tensor a = Tensor::int64s({3, -1, 7});
  EXPECT_EQ(a.dims(), std::vector<int64_t>{3});
  EXPECT_EQ(a.to_int64s(), (std::vector<int64_t>{3, -1, 7}));
  Tensor b = Tensor::int64s({3, -1, 7});
  EXPECT_TRUE(a.same_content(b));
  EXPECT_EQ(a.content_hash(), b.content_hash());
  EXPECT_FALSE(a.same_content(Tensor::int64s({3, -1, 8})));
  // Same bytes, other dtype: not the same content.
  EXPECT_FALSE(Tensor::scalar(DType::Int32, 1).same_content(Tensor::scalar(DType::UInt32, 1)));
}

TEST(Tensor, ScalarConversionAndWidening) {
  EXPECT_EQ(Tensor::scalar(DType::UInt8, 255).to_int64s(), std::vector<int64_t>{255});
  EXPECT_EQ(Tensor::scalar(DType::Int8, -3).to_int64s(), std::vector<int64_t>{-3});
  EXPECT_EQ(Tensor::scalar(DType::Bool, 2.0).to_int64s(), std::vector<int64_t>{1});
  EXPECT_DOUBLE_EQ(Tensor::scalar(DType::Float32, 0.5).to_doubles()[0], 0.5);
  EXPECT_THROW(Tensor::scalar(DType::Float32, 1).to_int64s(), BuildError);
}

TEST(Tensor, RejectsWrongByteCount) {
  EXPECT_THROW(Tensor(DType::Float32, {2}, std::vector<uint8_t>(7)), BuildError);
  EXPECT_THROW(Tensor(DType::Float32, {-1}, {}), BuildError);
}

TEST(Tensor, BorrowedKeepsOwnerAlive) {
  auto owner = std::make_shared<std::vector<double>>(std::vector<double>{1.5, 2.5});
  std::weak_ptr<std::vector<double>> watch = owner;
  Tensor t = Tensor::borrowed(DType::Float64, {2}, owner->data(), 16, owner);
  owner.reset();
  ASSERT_FALSE(watch.expired());  // the tensor holds the only reference now
  EXPECT_EQ(t.to_doubles(), (std::vector<double>{1.5, 2.5}));
  t = Tensor();
  EXPECT_TRUE(watch.expired());
}

}  // namespace
}  // namespace pytensor_onnx
