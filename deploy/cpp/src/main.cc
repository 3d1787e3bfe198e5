// pymc_logp: log-density and gradient of an exported PyMC model, from the
// command line or as a line-oriented service on standard input/output.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "errors.h"
#include "logp_model.h"
#include "point.h"

namespace {

constexpr const char* kUsage =
    "usage: pymc_logp MODEL.onnx [--point JSON] [--data JSON|@FILE] [--layout] [--threads N]\n"
    "\n"
    "Log-density and gradient of a PyMC model exported with\n"
    "pytensor_onnx.pymc.export_logp(model, filename, flat=True).\n"
    "\n"
    "  --point JSON  evaluate one point: the flat vector (a list of numbers, in\n"
    "                the layout's order) or values by name ({\"mu\": 0.1, ...})\n"
    "  (no --point)  read points from standard input, one JSON value a line, and\n"
    "                write one result a line; a point that fails gives\n"
    "                {\"error\": ...} and the exit status 1 at the end\n"
    "  --data JSON   the values of the model's pm.Data inputs (export_logp's\n"
    "                data_inputs), by name: {\"xy\": [[...], ...]}; @FILE reads\n"
    "                the JSON from a file\n"
    "  --layout      print the layout the model carries and exit\n"
    "  --threads N   ONNX Runtime's intra-op threads (default 1; 0: one per core)\n"
    "\n"
    "A result is {\"logp\": ..., \"dlogp\": [...], \"dlogp_by_variable\": {...}};\n"
    "non-finite numbers are the strings \"NaN\", \"Infinity\", \"-Infinity\".\n";

struct Options {
  std::string model;
  std::optional<std::string> point;
  std::optional<std::string> data;
  bool layout = false;
  int threads = 1;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << "pymc_logp: " << message << "\n\n" << kUsage;
  std::exit(2);
}

Options parse_arguments(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      std::exit(0);
    } else if (arg == "--point") {
      options.point = value();
    } else if (arg == "--data") {
      options.data = value();
    } else if (arg == "--layout") {
      options.layout = true;
    } else if (arg == "--threads") {
      const std::string text = value();
      char* end = nullptr;
      const long n = std::strtol(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || n < 0 || n > 1024) usage_error("--threads takes a count, not " + text);
      options.threads = static_cast<int>(n);
    } else if (!arg.empty() && arg[0] == '-') {
      usage_error("unknown option " + arg);
    } else if (options.model.empty()) {
      options.model = arg;
    } else {
      usage_error("one model file only (got " + options.model + " and " + arg + ")");
    }
  }
  if (options.model.empty()) usage_error("no model file given");
  return options;
}

nlohmann::json parse_json(const std::string& text, const std::string& what) {
  nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) throw pymc_logp::Error(what + " is not valid JSON: " + text.substr(0, 60));
  return value;
}

// --data: a JSON object by pm.Data name, given inline or as @FILE.
void set_data(pymc_logp::LogpModel& model, const std::string& arg) {
  std::string text = arg;
  if (!arg.empty() && arg[0] == '@') {
    std::ifstream file(arg.substr(1));
    if (!file) throw pymc_logp::Error("cannot read the data file " + arg.substr(1));
    text.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  }
  const nlohmann::json data = parse_json(text, "--data");
  if (!data.is_object()) throw pymc_logp::Error("--data takes a JSON object of values by pm.Data name");
  for (const auto& item : data.items()) model.set_data(item.key(), item.value());
}

nlohmann::json evaluate_text(pymc_logp::LogpModel& model, const std::string& text) {
  const nlohmann::json point = parse_json(text, "the point");
  return pymc_logp::result_to_json(model.evaluate(pymc_logp::read_point(point, model.layout())), model.layout());
}

// One result line per input line; errors are reported in place, so a client
// can pair answers with requests, and make the exit status 1.
int serve(pymc_logp::LogpModel& model) {
  int status = 0;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      std::cout << evaluate_text(model, line).dump() << std::endl;
    } catch (const pymc_logp::Error& e) {
      std::cout << nlohmann::json{{"error", e.what()}}.dump() << std::endl;
      status = 1;
    }
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_arguments(argc, argv);
  try {
    pymc_logp::LogpModel model(options.model, options.threads);
    if (options.data) set_data(model, *options.data);
    if (options.layout) {
      // ordered_json: the keys in the exporter's order, as the file has them.
      std::cout << nlohmann::ordered_json::parse(model.layout_json()).dump(2) << "\n";
      return 0;
    }
    if (options.point) {
      std::cout << evaluate_text(model, *options.point).dump() << "\n";
      return 0;
    }
    return serve(model);
  } catch (const std::exception& e) {
    std::cerr << "pymc_logp: error: " << e.what() << "\n";
    return 1;
  }
}
