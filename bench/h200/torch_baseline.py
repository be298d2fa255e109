#!/usr/bin/env python3
"""The plain-torch MoE on an H200, timed the way moegen-bench-h200 times moegen.

The layer, for each token count of each shape (shared/design/PEERS-H200.md):
the (token, slot) pairs stably sorted by expert, the tokens gathered, one
torch._grouped_mm for gate and up (bf16 weights [E, 2I, D], gate rows first),
silu(gate) * up, one torch._grouped_mm for down ([E, D, I]), each row times
its routing weight, the rows scattered back to (token, slot) order and summed
over the top-k. Everything from the routing on is timed (the sort included,
as moegen's time includes its sorting).

Timing: R input sets (8 up to 64 tokens, else 2), each with its own hidden
states and routing (softmax of N(0, 1) logits, top-k, renormalized), are
captured into one CUDA graph of R calls; after warm-up replays, each replay
is timed between two CUDA events and the median over the replays, divided by
R, is the time per call. One call per token count is first compared with a
float32 loop over the experts on evenly spaced tokens (relative Frobenius
error).

Prints CSV (bench/h200/Baseline.h reads it):
  shape,model_dim,inter_dim,experts,topk,tokens,sets,torch_us,rel_err
--plan prints the rows it would time, with empty times, and needs no torch.
"""

import argparse
import statistics
import sys

SHAPES = {
    "A": dict(model_dim=3584, inter_dim=384, experts=896, topk=16),  # Kimi-K3 TP8
    "B": dict(model_dim=7168, inter_dim=256, experts=256, topk=8),  # DeepSeek-V3 TP8
}
TOKENS = [1, 4, 16, 64, 256, 1024, 2048, 4096, 8192, 16384]
HEADER = "shape,model_dim,inter_dim,experts,topk,tokens,sets,torch_us,rel_err"


def rotated_sets(tokens):
    return 8 if tokens <= 64 else 2


def spread_tokens(tokens, count):
    """`count` of range(tokens), evenly spaced, first and last included."""
    if count <= 0 or count >= tokens:
        return list(range(tokens))
    if count == 1:
        return [0]
    return [i * (tokens - 1) // (count - 1) for i in range(count)]


def csv_row(shape, tokens, us=None, rel_err=None):
    s = SHAPES[shape]
    fields = [shape, s["model_dim"], s["inter_dim"], s["experts"], s["topk"], tokens,
              rotated_sets(tokens), "" if us is None else f"{us:.2f}",
              "" if rel_err is None else f"{rel_err:.3e}"]
    return ",".join(str(f) for f in fields)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shapes", default="A,B", help="comma-separated, of " + ",".join(SHAPES))
    p.add_argument("--tokens", default=",".join(str(t) for t in TOKENS),
                   help="comma-separated token counts")
    p.add_argument("--plan", action="store_true", help="print the rows to time; no GPU, no torch")
    p.add_argument("--target-ms", type=float, default=100.0,
                   help="device time of the timed replays per token count")
    p.add_argument("--min-replays", type=int, default=5)
    p.add_argument("--max-replays", type=int, default=60)
    p.add_argument("--warmup", type=int, default=2, help="untimed replays first")
    p.add_argument("--check-tokens", type=int, default=16,
                   help="tokens of the checked call compared with the float32 loop")
    args = p.parse_args(argv)
    args.shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    for s in args.shapes:
        if s not in SHAPES:
            p.error(f"--shapes: unknown shape '{s}' (known: {', '.join(SHAPES)})")
    try:
        args.tokens = [int(t) for t in args.tokens.split(",") if t.strip()]
    except ValueError:
        p.error(f"--tokens: '{args.tokens}' is not a list of integers")
    if not args.tokens or min(args.tokens) < 1:
        p.error("--tokens: token counts must be positive")
    if args.min_replays < 1 or args.max_replays < args.min_replays or args.warmup < 0:
        p.error("--min-replays, --max-replays, --warmup: need 1 <= min <= max and warmup >= 0")
    return args


def moe(torch, x, w13t, w2t, ids, weights, expert_ids):
    """The layer on one input set; w13t [E, D, 2I] and w2t [E, I, D] are
    transposed views of the [E, 2I, D] and [E, D, I] weights."""
    tokens, topk = ids.shape
    flat = ids.reshape(-1)
    order = torch.argsort(flat, stable=True)
    # Where each expert's rows end in the sorted order (what _grouped_mm takes).
    offsets = torch.searchsorted(flat[order], expert_ids, right=True).to(torch.int32)
    rows = x.index_select(0, order // topk)
    gate_up = torch._grouped_mm(rows, w13t, offs=offsets)
    inter = gate_up.shape[1] // 2
    act = torch.nn.functional.silu(gate_up[:, :inter]) * gate_up[:, inter:]
    down = torch._grouped_mm(act, w2t, offs=offsets)
    down = down * weights.reshape(-1)[order].unsqueeze(1).to(down.dtype)
    by_slot = torch.empty_like(down).index_copy_(0, order, down)
    return by_slot.view(tokens, topk, -1).sum(dim=1)


def reference(torch, x, w13, w2, ids, weights, tokens):
    """float32 loop over the (token, slot) pairs of `tokens`."""
    inter = w13.shape[1] // 2
    out = []
    for t in tokens:
        acc = torch.zeros(x.shape[1], dtype=torch.float32, device=x.device)
        for k in range(ids.shape[1]):
            e = int(ids[t, k])
            h = w13[e].float() @ x[t].float()
            a = torch.nn.functional.silu(h[:inter]) * h[inter:]
            acc += float(weights[t, k]) * (w2[e].float() @ a)
        out.append(acc)
    return torch.stack(out)


def input_set(torch, shape, tokens, set_index, device):
    s = SHAPES[shape]
    gen = torch.Generator(device=device).manual_seed(1234 + set_index)
    x = torch.randn(tokens, s["model_dim"], generator=gen, device=device).to(torch.bfloat16)
    logits = torch.randn(tokens, s["experts"], generator=gen, device=device)
    top, ids = torch.softmax(logits, dim=-1).topk(s["topk"], dim=-1)
    return x, ids, top / top.sum(dim=-1, keepdim=True)


def time_graph(torch, graph, replays):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    ms = []
    for _ in range(replays):
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        ms.append(start.elapsed_time(end))
    return ms


def bench_shape(torch, shape, args, out):
    s = SHAPES[shape]
    device = torch.device("cuda")
    D, I, E = s["model_dim"], s["inter_dim"], s["experts"]
    gen = torch.Generator(device=device).manual_seed(42)
    w13 = (torch.randn(E, 2 * I, D, generator=gen, device=device) / D ** 0.5).to(torch.bfloat16)
    w2 = (torch.randn(E, D, I, generator=gen, device=device) / I ** 0.5).to(torch.bfloat16)
    w13t, w2t = w13.transpose(-2, -1), w2.transpose(-2, -1)
    expert_ids = torch.arange(E, device=device)
    for tokens in args.tokens:
        sets = [input_set(torch, shape, tokens, r, device) for r in range(rotated_sets(tokens))]
        # One call checked, which also warms up (the capture needs a run outside it).
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            x, ids, weights = sets[0]
            got = moe(torch, x, w13t, w2t, ids, weights, expert_ids)
        torch.cuda.current_stream().wait_stream(side)
        checked = spread_tokens(tokens, args.check_tokens)
        want = reference(torch, x, w13, w2, ids, weights, checked)
        rel_err = float((got[checked].float() - want).norm() / want.norm())

        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outs = [moe(torch, x, w13t, w2t, ids, weights, expert_ids) for x, ids, weights in sets]
        warm = time_graph(torch, graph, max(args.warmup, 1))
        replays = min(max(round(args.target_ms / max(warm[-1], 1e-3) + 0.5), args.min_replays),
                      args.max_replays)
        ms = time_graph(torch, graph, replays)
        us = statistics.median(ms) / len(sets) * 1000
        print(csv_row(shape, tokens, us, rel_err), file=out, flush=True)
        print(f"torch_baseline: shape {shape}, {tokens} tokens: {replays} replays of {len(sets)} "
              f"calls, {us:.1f} us per call, rel. error {rel_err:.2e}", file=sys.stderr)
        del graph, outs, sets, got
        torch.cuda.empty_cache()


def main(argv):
    args = parse_args(argv)
    print(HEADER)
    if args.plan:
        for shape in args.shapes:
            for tokens in args.tokens:
                print(csv_row(shape, tokens))
        return 0
    try:
        import torch
    except ImportError as e:
        print(f"torch_baseline: cannot import torch ({e}); --plan needs none", file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print("torch_baseline: no CUDA device visible to torch", file=sys.stderr)
        return 1
    print(f"torch_baseline: torch {torch.__version__}, {torch.cuda.get_device_name()}",
          file=sys.stderr)
    for shape in args.shapes:
        bench_shape(torch, shape, args, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
