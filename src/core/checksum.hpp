// FNV-1a over what a restart depends on, eight bytes a step (a checkpoint of 10^6 particles is
// 150 MB): each step is bijective in the hash, so one flipped bit anywhere changes the sum.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace grove {

class Checksum {
  public:
    // The bytes in words of eight from the first, then the few left one by one.
    void add(const void* data, std::size_t bytes)
    {
        const auto* b = static_cast<const unsigned char*>(data);
        std::size_t i = 0;
        for (; i + 8 <= bytes; i += 8) add_word(b + i);
        for (; i < bytes; ++i) add_byte(b[i]);
    }
    template <class T> void add(const T& value) { add(&value, sizeof value); }
    void add(const std::string& text)
    {
        add(text.size());
        add(text.data(), text.size());
    }
    template <class Matrix> void add_matrix(const Matrix& m)
    {
        add(static_cast<std::int64_t>(m.rows()));
        add(static_cast<std::int64_t>(m.cols()));
        add(m.data(), static_cast<std::size_t>(m.size()) * sizeof(*m.data()));
    }

    // One run of bytes given in pieces (processes in turn adding theirs, parallel/domain_files.hpp):
    // once end_pieces() has added what is left, the sum is that of one add() of the whole run. A
    // piece's last bytes short of a word wait for the next piece's first.
    void add_piece(const void* data, std::size_t bytes)
    {
        const auto* b = static_cast<const unsigned char*>(data);
        std::size_t i = 0;
        for (; pending_count_ > 0 && pending_count_ < 8 && i < bytes; ++i) pending_[pending_count_++] = b[i];
        if (pending_count_ == 8) {
            add_word(pending_);
            pending_count_ = 0;
        }
        for (; i + 8 <= bytes; i += 8) add_word(b + i);
        for (; i < bytes; ++i) pending_[pending_count_++] = b[i];
    }
    void end_pieces()
    {
        for (std::uint64_t k = 0; k < pending_count_; ++k) add_byte(pending_[k]);
        pending_count_ = 0;
    }

    std::uint64_t value() const { return hash_; }

  private:
    void add_word(const unsigned char* b)
    {
        std::uint64_t word;
        std::memcpy(&word, b, 8);
        hash_ = (hash_ ^ word) * 1099511628211ull;
    }
    void add_byte(unsigned char b) { hash_ = (hash_ ^ b) * 1099511628211ull; }

    // Plain data, so that a process can hand the whole state to the next as bytes.
    std::uint64_t hash_ = 14695981039346656037ull;
    std::uint64_t pending_count_ = 0;
    unsigned char pending_[8] = {};
};

} // namespace grove
