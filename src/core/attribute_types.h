// The ONNX attribute type each well-known attribute name has.
#pragma once

#include <string>

#include "attribute.h"

namespace pytensor_onnx {

// Checks (and where exact, converts) the attributes of a default-domain op
// against the type ONNX gives their name: an int where ONNX wants a float
// becomes that float, one int where it wants ints becomes a list; anything
// else of the wrong type, and a dtype code ONNX does not define ("to",
// "dtype"), throws BuildError; so does an attribute the op does not have, or
// a string attribute that is not one of its choices (the op's entry in the
// op table, ops.h). Names not in the table of kinds pass unchecked.
void check_attribute_types(const std::string& op_type, Attributes& attrs);

}  // namespace pytensor_onnx
