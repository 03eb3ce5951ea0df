"""`vtc opt --print-after=lower --strategy S` prints the program strategy S lowers to: its first
line names the strategy, and greedy's program keeps fewer copy steps than none's on the small
Llama layer (whose Transpose / Expand / Reshape chains greedy makes virtual)."""

import subprocess
import sys

from tool_args import small_workload, vtc_and_work


def program(vtc: str, model: str, strategy: str) -> list[str]:
    out = subprocess.run([vtc, "opt", model, "--print-after=lower", "--strategy", strategy,
                          "--donate", "past_k", "--donate", "past_v"],
                         check=True, capture_output=True, text=True).stdout
    return out.splitlines()


def main() -> int:
    args = vtc_and_work()
    model = small_workload(args.work, "llama3_layer")
    copies = {}
    for strategy in ("none", "greedy"):
        lines = program(args.vtc, model, strategy)
        if lines[0] != f"program strategy {strategy}":
            print(f"--strategy {strategy}: first line is '{lines[0]}'")
            return 1
        copies[strategy] = sum(1 for line in lines if line.startswith("  step ") and " copy " in line)
    print(f"copy steps: none {copies['none']}, greedy {copies['greedy']}")
    return 0 if copies["greedy"] < copies["none"] else 1


if __name__ == "__main__":
    sys.exit(main())
