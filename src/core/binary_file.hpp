// Raw binary particle files (tipsy, GADGET's own format): the whole file read at once, then
// fields taken from it in order with their byte order and every read checked against the file's
// length, so that a truncated or damaged file gives an error naming it, never a read past its end;
// and the writer's counterpart, a buffer filled in order and written atomically.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace grove {

// Whether the bytes of a value are in the machine's order or reversed.
enum class ByteOrder { native, swapped };

// Big-endian (XDR, the standard tipsy order) on this machine.
ByteOrder big_endian_order();

class BinaryReader {
  public:
    // Reads the whole file, or only its first `head` bytes (a header, to tell a format or count
    // particles: size() is still the file's); throws std::runtime_error naming it if it cannot.
    explicit BinaryReader(const std::string& path, std::size_t head = SIZE_MAX);
    const std::string& path() const { return path_; }
    std::size_t size() const { return file_size_; }
    std::size_t position() const { return at_; }
    std::size_t left() const { return bytes_.size() - at_; } // of the bytes read
    void seek(std::size_t at);
    void skip(std::size_t bytes) { seek(at_ + bytes); }
    ByteOrder order = ByteOrder::native;

    template <class T> T read()
    {
        need(sizeof(T), "a value");
        const T v = value_at<T>(at_, order);
        at_ += sizeof(T);
        return v;
    }
    // A value at `at` without moving (to look at a header before choosing the byte order); zero
    // past the end.
    template <class T> T peek(std::size_t at, ByteOrder o) const
    {
        return at + sizeof(T) > bytes_.size() ? T{} : value_at<T>(at, o);
    }
    // Throws "... is truncated" unless `bytes` more are there.
    void need(std::size_t bytes, const std::string& what) const;
    // Throws std::runtime_error "<path>: <message>".
    [[noreturn]] void fail(const std::string& message) const;

  private:
    template <class T> T value_at(std::size_t at, ByteOrder o) const
    {
        unsigned char b[sizeof(T)];
        std::memcpy(b, bytes_.data() + at, sizeof(T));
        if (o == ByteOrder::swapped)
            for (std::size_t k = 0; k < sizeof(T) / 2; ++k) std::swap(b[k], b[sizeof(T) - 1 - k]);
        T v;
        std::memcpy(&v, b, sizeof(T));
        return v;
    }
    std::string path_;
    std::vector<unsigned char> bytes_;
    std::size_t file_size_ = 0;
    std::size_t at_ = 0;
};

class BinaryWriter {
  public:
    ByteOrder order = ByteOrder::native;
    template <class T> void write(T v)
    {
        unsigned char b[sizeof(T)];
        std::memcpy(b, &v, sizeof(T));
        if (order == ByteOrder::swapped)
            for (std::size_t k = 0; k < sizeof(T) / 2; ++k) std::swap(b[k], b[sizeof(T) - 1 - k]);
        bytes_.insert(bytes_.end(), b, b + sizeof(T));
    }
    void zeros(std::size_t count) { bytes_.insert(bytes_.end(), count, 0); }
    std::size_t size() const { return bytes_.size(); }
    // Overwrites the 4-byte value at `at` (a record's length, known once its data is written).
    void patch_u32(std::size_t at, std::uint32_t v);
    // Writes the buffer to `path` through a temporary name renamed into place; throws
    // std::runtime_error naming the path.
    void save(const std::string& path) const;

  private:
    std::vector<unsigned char> bytes_;
};

} // namespace grove
