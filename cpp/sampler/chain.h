// Sampler stages and the chain that runs them, after llama.cpp's
// llama_sampler_i (src/llama-sampling.cpp): a stage filters or rescores the
// candidates in apply(), watches the accepted tokens in accept(), and forgets
// them in reset(). The chain is itself a stage.
#pragma once

#include <memory>
#include <vector>

#include "sampler/candidates.h"

namespace wllm {

class SamplerStage {
 public:
  virtual ~SamplerStage() = default;
  virtual const char* name() const = 0;
  // Must not allocate: it runs once per generated token.
  virtual void apply(Candidates& cur) = 0;
  virtual void accept(int32_t /*token*/) {}
  virtual void reset() {}
};

class SamplerChain final : public SamplerStage {
 public:
  void add(std::unique_ptr<SamplerStage> stage) { stages_.push_back(std::move(stage)); }
  size_t size() const { return stages_.size(); }
  const SamplerStage& stage(size_t i) const { return *stages_[i]; }

  const char* name() const override { return "chain"; }
  void apply(Candidates& cur) override {
    for (auto& s : stages_) s->apply(cur);
  }
  void accept(int32_t token) override {
    for (auto& s : stages_) s->accept(token);
  }
  void reset() override {
    for (auto& s : stages_) s->reset();
  }

 private:
  std::vector<std::unique_ptr<SamplerStage>> stages_;
};

}  // namespace wllm
