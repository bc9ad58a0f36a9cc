// The ranks on this host whose GPUs reach each other's memory (CUDA IPC): a rank writes the LET
// for such a peer into a device buffer of its own, exported once, and the peer copies it from
// there, GPU to GPU over NVLink or PCIe, instead of through both hosts' memory and MPI. MPI still
// carries everything else: the small ticket that names the buffer, the ranks on other hosts, the
// order of the steps. Chosen at run time: a peer is direct only where both ranks could map each
// other's probe; GROVE_LET_TRANSPORT=host sends every LET through MPI. Private to gpu/ (the
// resident step on domains).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/rank_exchange.hpp"
#include "gpu/device_buffer.cuh"
#include "tree/let_wire.hpp"

namespace grove {

class IpcPeers {
  public:
    IpcPeers() = default;
    IpcPeers(const IpcPeers&) = delete;
    IpcPeers& operator=(const IpcPeers&) = delete;
    ~IpcPeers();

    // Collective (every rank calls it, once): finds the direct peers.
    void connect(RankExchange& ranks);
    bool direct(int rank) const { return !direct_.empty() && direct_[static_cast<std::size_t>(rank)] != 0; }
    // Whether any two ranks of the run are direct peers (the same answer on every rank).
    bool any() const { return any_; }

    // Device room for `bytes` of the LET for direct peer `rank`, where it reads it. A larger
    // buffer replaces a smaller one; the old stays allocated until retire(), because the peer
    // may still map it.
    char* outbox(int rank, std::size_t bytes);
    // What goes to `rank` through MPI in place of the LET of `bytes` (with `header`) just written
    // to its outbox.
    std::vector<char> ticket(int rank, std::size_t bytes, const LetHeader& header) const;
    // The LET that a direct peer's ticket names: mapped on this device (opened anew where the peer
    // replaced its buffer), with its header and length; read with copies on this rank's stream.
    const char* receive(int rank, const char* ticket, std::size_t size, LetHeader& header, std::size_t& bytes);
    // After an exchange, once every rank is done with what it mapped (a barrier): frees the buffers
    // that larger ones replaced.
    void retire() { retired_.clear(); }

  private:
    struct Mapping {
        std::uint64_t generation = 0;
        char* data = nullptr;
    };
    std::vector<unsigned char> direct_;
    bool any_ = false;
    int rank_ = 0;
    std::vector<std::unique_ptr<gpu::DeviceBuffer<char>>> outbox_;
    std::vector<std::uint64_t> generation_;
    std::vector<cudaIpcMemHandle_t> handle_;
    std::vector<std::unique_ptr<gpu::DeviceBuffer<char>>> retired_;
    std::vector<Mapping> mapped_;
};

} // namespace grove
