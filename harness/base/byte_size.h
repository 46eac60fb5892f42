// Memory sizes as users write them: "80GiB", "80 GB", "141G", "512MiB", "1048576".
#pragma once

#include <cstdint>
#include <string>

namespace twinbench {

// Bytes of `text`: a positive number (decimals allowed) and an optional unit,
// binary (KiB, MiB, GiB, TiB; K, M, G, T alone are binary too, as nvidia-smi
// prints) or decimal (KB, MB, GB, TB), case-insensitive, a space allowed
// between. Throws std::invalid_argument naming the text and the accepted forms.
int64_t parse_byte_size(const std::string& text);

}  // namespace twinbench
