#include "core/binary_file.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace grove {

ByteOrder big_endian_order()
{
    const std::uint16_t one = 1;
    unsigned char first = 0;
    std::memcpy(&first, &one, 1);
    return first == 1 ? ByteOrder::swapped : ByteOrder::native; // little-endian machines swap
}

BinaryReader::BinaryReader(const std::string& path, std::size_t head) : path_(path)
{
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) throw std::runtime_error(path + ": cannot open the file");
    const auto size = in.tellg();
    if (size < 0) throw std::runtime_error(path + ": cannot read the file");
    file_size_ = static_cast<std::size_t>(size);
    bytes_.resize(std::min(file_size_, head));
    in.seekg(0);
    if (!bytes_.empty() &&
        !in.read(reinterpret_cast<char*>(bytes_.data()), static_cast<std::streamsize>(bytes_.size())))
        throw std::runtime_error(path + ": cannot read the file");
}

void BinaryReader::seek(std::size_t at)
{
    if (at > bytes_.size()) fail("is truncated (" + std::to_string(file_size_) + " bytes)");
    at_ = at;
}

void BinaryReader::need(std::size_t bytes, const std::string& what) const
{
    if (bytes > left())
        fail("is truncated: " + what + " needs " + std::to_string(bytes) + " bytes at byte " + std::to_string(at_) +
             ", the file has " + std::to_string(file_size_));
}

void BinaryReader::fail(const std::string& message) const
{
    throw std::runtime_error(path_ + ": " + message);
}

void BinaryWriter::patch_u32(std::size_t at, std::uint32_t v)
{
    unsigned char b[4];
    std::memcpy(b, &v, 4);
    if (order == ByteOrder::swapped) {
        std::swap(b[0], b[3]);
        std::swap(b[1], b[2]);
    }
    std::memcpy(bytes_.data() + at, b, 4);
}

void BinaryWriter::save(const std::string& path) const
{
    const std::string temporary = path + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        if (!out) throw std::runtime_error("cannot write " + path + ": cannot create " + temporary);
        out.write(reinterpret_cast<const char*>(bytes_.data()), static_cast<std::streamsize>(bytes_.size()));
        out.flush();
        if (!out) {
            std::remove(temporary.c_str());
            throw std::runtime_error("cannot write " + path + ": the write failed (disk full?)");
        }
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
        std::remove(temporary.c_str());
        throw std::runtime_error("cannot write " + path + ": cannot rename the finished file into place");
    }
}

} // namespace grove
