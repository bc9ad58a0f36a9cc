// A list of CUDA device numbers as users write it ("0" or "1,2"): --gpus and GROVE_DEVICES.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace grove {

// The numbers, or nothing when the text is not such a list (an empty item, a sign, a letter,
// a number past 4096). An empty text is an empty list.
inline std::optional<std::vector<int>> parse_device_list(const std::string& text)
{
    std::vector<int> devices;
    if (text.empty()) return devices;
    for (std::size_t begin = 0;;) {
        const std::size_t comma = text.find(',', begin);
        const std::string item = text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
        char* end = nullptr;
        const long d = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || item[0] < '0' || item[0] > '9' || *end != '\0' || d > 4096) return std::nullopt;
        devices.push_back(static_cast<int>(d));
        if (comma == std::string::npos) return devices;
        begin = comma + 1;
    }
}

} // namespace grove
