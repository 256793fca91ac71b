// wasm-llm tokenize -m FILE [--no-bos] [--special] (TEXT | --file F) [--jsonl]
//
// Prints the token ids of TEXT (or of the raw bytes of file F, which need not
// be valid UTF-8) as a JSON array on one line, like llama.cpp's
// llama_tokenize: add_special unless --no-bos (BOS/EOS as the vocabulary's
// add_bos/add_eos flags say), parse_special with --special.
//
// --jsonl (with --file F, or "-" for stdin): every input line is a JSON
// string; every output line is the JSON array of its ids. The reference test
// uses it to tokenize a whole corpus in one process.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/model_file.h"
#include "core/file_io.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace wllm::cli {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Parses one JSON string literal (the whole line, surrounding whitespace
// allowed). A lone surrogate escape becomes U+FFFD, as a JS string does when
// node-llama-cpp converts it to UTF-8.
Result<std::string> parse_json_string(std::string_view line, size_t line_no) {
  const auto fail = [&](const char* what) {
    return Status::error(ErrorCode::kInvalidArgument, "line %zu: %s", line_no, what);
  };
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
  if (i >= line.size() || line[i] != '"') return fail("expected a JSON string");
  ++i;
  std::string out;
  const auto read_u16 = [&](uint32_t* v) {
    if (i + 4 > line.size()) return false;
    *v = 0;
    for (int k = 0; k < 4; ++k) {
      const int h = hex_value(line[i + k]);
      if (h < 0) return false;
      *v = *v * 16 + static_cast<uint32_t>(h);
    }
    i += 4;
    return true;
  };
  while (true) {
    if (i >= line.size()) return fail("unterminated JSON string");
    const char c = line[i++];
    if (c == '"') break;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (i >= line.size()) return fail("unterminated escape");
    const char e = line[i++];
    switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        uint32_t cpt;
        if (!read_u16(&cpt)) return fail("bad \\u escape");
        if (cpt >= 0xD800 && cpt <= 0xDBFF) {
          uint32_t lo;
          const size_t save = i;
          if (i + 1 < line.size() && line[i] == '\\' && line[i + 1] == 'u' && (i += 2, read_u16(&lo)) &&
              lo >= 0xDC00 && lo <= 0xDFFF) {
            cpt = 0x10000 + ((cpt - 0xD800) << 10) + (lo - 0xDC00);
          } else {
            i = save;
            cpt = kReplacementChar;
          }
        } else if (cpt >= 0xDC00 && cpt <= 0xDFFF) {
          cpt = kReplacementChar;
        }
        append_utf8(cpt, &out);
        break;
      }
      default:
        return fail("bad escape");
    }
  }
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
  if (i != line.size()) return fail("text after the JSON string");
  return out;
}

void print_ids(const std::vector<int32_t>& ids, std::string* out) {
  *out += '[';
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) *out += ',';
    *out += std::to_string(ids[i]);
  }
  *out += "]\n";
}

Status run(const Args& args) {
  const std::string model_path = args.get_string({"-m", "--model"});
  if (model_path.empty()) return Status::error(ErrorCode::kInvalidArgument, "tokenize needs -m FILE");
  const std::string file = args.get_string({"--file"});
  const bool jsonl = args.has("--jsonl");
  if (jsonl && file.empty()) {
    return Status::error(ErrorCode::kInvalidArgument, "--jsonl reads its lines from --file F (or --file -)");
  }
  if (!file.empty() && !args.positionals().empty()) {
    return Status::error(ErrorCode::kInvalidArgument, "give TEXT or --file F, not both");
  }
  if (file.empty() && args.positionals().size() != 1) {
    return Status::error(ErrorCode::kInvalidArgument, "tokenize needs one TEXT argument (quote it) or --file F");
  }
  const bool add_special = !args.has("--no-bos");
  const bool parse_special = args.has("--special");

  WLLM_ASSIGN_OR_RETURN(const std::shared_ptr<ModelFiles> files,
                        ModelFiles::open(model_path, args.get_string({"--tokenizer"})));
  WLLM_ASSIGN_OR_RETURN(const ModelLayout layout, files->layout());
  Result<Tokenizer> tok = Tokenizer::from_gguf(layout.file);
  if (!tok.ok()) return tok.status().with_context(model_path);

  std::string input;
  if (file.empty()) {
    input = args.positionals()[0];
  } else {
    WLLM_ASSIGN_OR_RETURN(input, read_file(file));
  }

  std::string out;
  if (!jsonl) {
    print_ids(tok->encode(input, add_special, parse_special), &out);
  } else {
    size_t start = 0;
    size_t line_no = 0;
    while (start < input.size()) {
      size_t end = input.find('\n', start);
      if (end == std::string::npos) end = input.size();
      const std::string_view line = std::string_view(input).substr(start, end - start);
      start = end + 1;
      ++line_no;
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;  // blank line
      WLLM_ASSIGN_OR_RETURN(const std::string text, parse_json_string(line, line_no));
      print_ids(tok->encode(text, add_special, parse_special), &out);
    }
  }
  const bool written = write_fully(stdout, out.data(), out.size());
  if (!written || std::fflush(stdout) != 0) return Status::error(ErrorCode::kIo, "cannot write to stdout");
  return {};
}

}  // namespace

const Command kTokenizeCommand = {
    .name = "tokenize",
    .synopsis = "tokenize -m FILE [--no-bos] [--special] (TEXT | --file F) [--jsonl]",
    .summary = "print token ids as a JSON array",
    .details = [] {
      return std::string(
          "--no-bos: no special tokens added; --special: control-token text (<|endoftext|>)\n"
          "becomes control tokens; --file F: F's bytes as TEXT; --jsonl: each line of --file F\n"
          "(-: stdin) is a JSON string, and each gives a line of ids.\n");
    },
    .reads_model = true,
    .switches = {"--no-bos", "--special", "--jsonl"},
    .options = {"-m", "--model", "--file", "--tokenizer"},
    .run = run,
};

}  // namespace wllm::cli
