#include "opset.h"


namespace pytensor_onnx {

int ir_version_for_opset(int opset) {
  // From the ONNX release table (onnx.helper.VERSION_TABLE).
  if (opset <= 8) return 3;
  if (opset == 9) return 4;
  if (opset == 10) return 5;
  if (opset == 11) return 6;
  if (opset <= 14) return 7;
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;
  if (opset <= 22) return 10;
  if (opset == 23) return 11;
  if (opset == 24) return 12;
  if (opset <= 27) return 13;
  return 14;
}

}  // namespace pytensor_onnx
