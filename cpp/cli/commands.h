// The CLI's subcommands. Each takes the arguments after its name and returns
// the process exit code; errors are printed to stderr as "error: <message>".
#pragma once

namespace wllm::cli {

int cmd_generate(int argc, char** argv);
int cmd_tokenize(int argc, char** argv);
int cmd_info(int argc, char** argv);
int cmd_quantize(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_synth(int argc, char** argv);
int cmd_logits(int argc, char** argv);
int cmd_embed(int argc, char** argv);
int cmd_convert(int argc, char** argv);
int cmd_split(int argc, char** argv);
int cmd_merge(int argc, char** argv);

// Prints "error: <message>" to stderr and returns the exit code for it.
int report_error(const char* message);

}  // namespace wllm::cli
