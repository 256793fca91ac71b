// wasm-llm quantize IN OUT.gguf TYPE: rewrites a model's weights in
// another type, into one GGUF file (IN: any model ModelFiles opens). Every
// tensor is read a block of rows at a time, dequantized with its type's
// to_float and requantized with the target's from_float, so
// any supported input type converts to any target. Metadata is copied as is,
// except general.file_type (and general.quantization_version) and a split
// model's split.* keys.
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/help.h"
#include "cli/model_file.h"
#include "cli/model_writer.h"
#include "cli/quant_plan.h"
#include "core/file_io.h"
#include "gguf/gguf_writer.h"

namespace wllm::cli {
namespace {

struct Totals {
  uint64_t bytes_in = 0, bytes_out = 0;
  std::map<std::string, int> count_by_type;
};

Status run(const Args& args) {
  if (args.positionals().size() != 3) {
    std::fputs(usage_text(kQuantizeCommand).c_str(), stderr);
    return Status::error(ErrorCode::kInvalidArgument, "quantize takes IN.gguf OUT.gguf TYPE");
  }
  const std::string in_path = args.positionals()[0];
  const std::string out_path = args.positionals()[1];
  const QuantScheme* scheme = find_quant_scheme(args.positionals()[2]);
  if (!scheme) {
    return Status::error(ErrorCode::kInvalidArgument, "unknown type '%s' (known: %s)", args.positionals()[2].c_str(),
                         quant_scheme_names().c_str());
  }
  WLLM_ASSIGN_OR_RETURN(const int64_t threads, args.get_int({"-t", "--threads"}, ThreadPool::default_threads()));
  if (threads < 1 || threads > 256) return Status::error(ErrorCode::kInvalidArgument, "--threads must be 1 to 256");
  std::error_code ec;
  if (std::filesystem::equivalent(in_path, out_path, ec)) {
    return Status::error(ErrorCode::kInvalidArgument, "output '%s' is the input file", out_path.c_str());
  }

  const auto t0 = std::chrono::steady_clock::now();
  WLLM_ASSIGN_OR_RETURN(const std::shared_ptr<ModelFiles> input, ModelFiles::open(in_path, args.get_string({"--tokenizer"})));
  WLLM_ASSIGN_OR_RETURN(const ModelLayout layout, input->layout());
  const GgufFile& in = layout.file;

  GgufWriter w;
  WLLM_RETURN_IF_ERROR(copy_model_metadata(in, &w));
  WLLM_RETURN_IF_ERROR(w.set_u32("general.file_type", scheme->ftype));
  if (type_traits(scheme->base).block_size > 1) WLLM_RETURN_IF_ERROR(w.set_u32("general.quantization_version", 2));

  std::vector<std::string> names;
  for (const GgufTensorInfo& t : in.tensors()) names.emplace_back(t.name);
  QuantPlanner planner(*scheme, args.has("--pure"), names);
  ThreadPool pool(static_cast<int>(threads));
  Totals totals;

  for (const GgufTensorInfo& t : in.tensors()) {
    const std::string name(t.name);
    const TensorChoice c = planner.choose(name, t.n_dims, t.ne[0]);
    const TypeTraits& from = type_traits(t.type);
    const TypeTraits& to = type_traits(c.type);
    if (c.fell_back()) {
      std::fprintf(stderr, "fallback: %-28s row length %lld is not a multiple of %lld (%s) -> %s\n", name.c_str(),
                   static_cast<long long>(t.ne[0]), static_cast<long long>(type_traits(c.wanted).block_size),
                   type_traits(c.wanted).name, to.name);
    }
    const std::span<const int64_t> shape(t.ne, static_cast<size_t>(t.n_dims));
    const int64_t row_len = t.ne[0];
    const int64_t n_rows = t.ne[1] * t.ne[2] * t.ne[3];
    WLLM_ASSIGN_OR_RETURN(const TensorSource source, tensor_source(layout, t));
    const int64_t src_row = row_bytes(from, row_len);
    if (from.type == to.type) {
      // Same type: copy the bytes (lossless, as llama.cpp does).
      WLLM_RETURN_IF_ERROR(w.add_tensor(name, to.type, shape, tensor_copier(input, layout, t)));
    } else {
      WLLM_RETURN_IF_ERROR(check_kernels(from, false, true).with_context("tensor '" + name + "'"));
      WLLM_RETURN_IF_ERROR(check_kernels(to, true, false).with_context("tensor '" + name + "'"));
      // The chunk of source rows currently loaded, shared by the two callbacks.
      auto chunk = std::make_shared<std::vector<uint8_t>>();
      auto first_row = std::make_shared<int64_t>(0);
      RowSource src;
      src.load = [input, chunk, first_row, source, src_row](int64_t first, int64_t count) {
        chunk->resize(static_cast<size_t>(count * src_row));
        *first_row = first;
        return input->read(source.file, source.offset + uint64_t(first * src_row), chunk->data(), chunk->size());
      };
      src.row = [chunk, first_row, src_row, row_len, &from](int64_t r, float* dst) {
        from.to_float(chunk->data() + (r - *first_row) * src_row, dst, row_len);
      };
      WLLM_RETURN_IF_ERROR(
          w.add_tensor(name, to.type, shape, make_row_producer(to, row_len, n_rows, std::move(src), &pool)));
    }
    totals.bytes_in += t.n_bytes;
    totals.bytes_out += row_bytes(to, row_len) * n_rows;
    ++totals.count_by_type[to.name];
  }

  WLLM_RETURN_IF_ERROR(w.write_file(out_path));
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::string types;
  for (const auto& [type, n] : totals.count_by_type) types += str_printf(" %s:%d", type.c_str(), n);
  std::fprintf(stderr, "quantized %s -> %s (%s, file_type %u) in %.1f s, %d threads\n", in_path.c_str(),
               out_path.c_str(), scheme->name, scheme->ftype, secs, static_cast<int>(threads));
  std::fprintf(stderr, "  tensors:%s\n", types.c_str());
  std::fprintf(stderr, "  tensor data %s -> %s, file %s -> %s\n", format_bytes(totals.bytes_in).c_str(),
               format_bytes(totals.bytes_out).c_str(), format_bytes(in.file_size()).c_str(),
               format_bytes(w.file_size()).c_str());
  return {};
}

}  // namespace

const Command kQuantizeCommand = {
    .name = "quantize",
    .synopsis = "quantize IN OUT.gguf TYPE [--pure] [--threads N] [--tokenizer FILE]",
    .summary = "convert a model's weights to TYPE (e.g. q4_0, q8_0, q4_K_M)",
    .details = [] {
      return "TYPE: " + quant_scheme_names() +
             "\n"
             "Plain types put every 2-D weight in TYPE except output.weight (or tied token_embd),\n"
             "which gets q6_K as in llama.cpp; the _S/_M/_L mixes follow llama.cpp's layer rules.\n"
             "--pure: TYPE for every 2-D weight, output included. 1-D tensors stay f32.\n";
    },
    .reads_model = true,
    .switches = {"--pure"},
    .options = {"-t", "--threads", "--tokenizer"},
    .run = run,
};

}  // namespace wllm::cli
