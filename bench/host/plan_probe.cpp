// The launch plan of each call described on stdin, as validate() and make_plan() make it on the host (no GPU, no
// device memory: tensor views carry shapes and strides only, and the plan reads no device data). One call a line,
// `key=value` words (scripts/plan_diff.py writes them from the scenario grid):
//   name=... q=bf16|fp16|e4m3 kv=bf16|fp16|e4m3 layout=paged|varlen|batched page=16 b=4 total_q=4 max_q=1
//   max_k=4096 hq=32 hkv=8 d=128 dv=128 causal=1 wl=-1 wr=-1 softcap=0 sinks=0 splits=0 q_v=0 cp=1 gap=0
// Prints `name tile=V splits=S block_m=M block_n=N persistent=P pack=K kernel=... cluster=C`, or `name error ...`
// (persistent: the plan's preference; run() takes that kernel only where src/host/tile_loop.h lets the tile have
// it; cluster: the splits that combine in a thread-block cluster, cluster-combine, 0 for the combine kernel). The
// plan reads FLASHSEEK_EXPERIMENT once, as the library does: one process per experiment value.
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "dense_view.h"
#include "flashseek/flashseek.h"

using namespace flashseek;

namespace {

DType dtype_of(const std::string& name) {
  if (name == "fp16") return DType::kFloat16;
  if (name == "e4m3") return DType::kFloat8E4M3;
  return DType::kBFloat16;
}

TensorView view(DType dtype, std::initializer_list<int64_t> shape) { return dense_view(dtype, shape); }

struct Line {
  std::map<std::string, std::string> words;
  std::string str(const std::string& key, const std::string& fallback) const {
    auto it = words.find(key);
    return it == words.end() ? fallback : it->second;
  }
  int64_t num(const std::string& key, int64_t fallback) const {
    auto it = words.find(key);
    return it == words.end() ? fallback : std::stoll(it->second);
  }
};

AttentionArgs call_of(const Line& in) {
  const DType q_dtype = dtype_of(in.str("q", "bf16"));
  const DType kv_dtype = dtype_of(in.str("kv", in.str("q", "bf16")));
  const std::string layout = in.str("layout", "paged");
  const int64_t b = in.num("b", 1), total_q = in.num("total_q", b), max_k = in.num("max_k", 1);
  const int64_t hq = in.num("hq", 1), hkv = in.num("hkv", 1), d = in.num("d", 128), dv = in.num("dv", d);
  const int64_t page = in.num("page", 16);
  AttentionArgs a;
  a.q = view(q_dtype, {total_q, hq, d});
  a.out = view(q_dtype == DType::kFloat8E4M3 ? DType::kBFloat16 : q_dtype, {total_q, hq, dv});
  a.cu_seqlens_q = view(DType::kInt32, {b + 1});
  if (layout == "paged") {
    const int64_t pages_per_seq = (max_k + page - 1) / page;
    a.k = view(kv_dtype, {b * pages_per_seq + 8, page, hkv, d});
    a.v = view(kv_dtype, {b * pages_per_seq + 8, page, hkv, dv});
    a.seqused_k = view(DType::kInt32, {b});
    a.block_table = view(DType::kInt32, {b, pages_per_seq});
  } else if (layout == "batched") {
    const int64_t rows = max_k + in.num("gap", 0);
    a.k = view(kv_dtype, {b, rows, hkv, d});
    a.v = view(kv_dtype, {b, rows, hkv, dv});
    a.seqused_k = view(DType::kInt32, {b});
  } else {
    a.k = view(kv_dtype, {b * max_k, hkv, d});
    a.v = view(kv_dtype, {b * max_k, hkv, dv});
    a.cu_seqlens_k = view(DType::kInt32, {b + 1});
  }
  if (in.num("q_v", 0)) a.q_v = view(q_dtype, {total_q, hq, dv});
  if (in.num("sinks", 0)) a.s_aux = view(DType::kFloat32, {hq});
  if (kv_dtype == DType::kFloat8E4M3) {
    a.q_descale = view(DType::kFloat32, {b, hkv});
    a.k_descale = view(DType::kFloat32, {b, hkv});
    a.v_descale = view(DType::kFloat32, {b, hkv});
    if (q_dtype != DType::kFloat8E4M3) a.q_descale = TensorView{};
  }
  a.cp_world_size = static_cast<int>(in.num("cp", 1));
  if (a.cp_world_size > 1) a.cp_tot_seqused_k = view(DType::kInt32, {b});
  a.max_seqlen_q = in.num("max_q", 1);
  a.max_seqlen_k = max_k;
  a.causal = in.num("causal", 1) != 0;
  a.window_left = static_cast<int>(in.num("wl", -1));
  a.window_right = static_cast<int>(in.num("wr", -1));
  a.softcap = std::stof(in.str("softcap", "0"));
  a.num_splits = static_cast<int>(in.num("splits", 0));
  return a;
}

}  // namespace

int main() {
  std::string text;
  while (std::getline(std::cin, text)) {
    Line line;
    std::istringstream words(text);
    for (std::string w; words >> w;) {
      const auto eq = w.find('=');
      if (eq != std::string::npos) line.words[w.substr(0, eq)] = w.substr(eq + 1);
    }
    const std::string name = line.str("name", "?");
    try {
      AttentionArgs a = call_of(line);
      validate(a);
      const LaunchPlan p = make_plan(a, DeviceInfo{});
      std::printf("%s tile=%d splits=%d block_m=%d block_n=%d persistent=%d pack=%d kernel=%s cluster=%d\n",
                  name.c_str(), p.tile_variant, p.num_splits, p.block_m, p.block_n, p.persistent ? 1 : 0,
                  p.kv_head_pack, p.kernel_name, p.cluster_splits);
    } catch (const std::exception& e) {
      std::string message = e.what();
      for (char& c : message)
        if (c == '\n') c = ' ';
      std::printf("%s error %s\n", name.c_str(), message.c_str());
    }
  }
  return 0;
}
