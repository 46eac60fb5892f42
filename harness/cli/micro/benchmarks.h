// The twinbench-micro benchmark catalogue: Google Benchmark registrations for the two
// implementations (forward, forward+backward, optimizer step through the Variant
// interface) and the shared ops (attention, SwiGLU MLP, RMSNorm, linear in fp32, int8 and
// fp8), each at the tiny and small sizes. Names are "<family>/<variant>/<size>", where
// variant is functional, module or shared: `twinbench db import-micro` parses them.
#pragma once

namespace twinbench::micro {

// Registers every benchmark (nothing is allocated until one runs).
void register_benchmarks();

}  // namespace twinbench::micro
