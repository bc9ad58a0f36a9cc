#include "gpu/ipc_peers.cuh"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace grove {
namespace {

// What a rank tells the others about itself when the peers are sought.
struct IpcProbe {
    char host[256];
    cudaIpcMemHandle_t handle;
    std::int32_t offers = 0; // exports its probe and wants direct peers
    std::int32_t pattern = 0;
};

// What travels through MPI in place of a LET: where it lies and what it holds.
struct IpcTicket {
    std::uint64_t magic;
    std::uint64_t generation;
    std::uint64_t bytes;
    cudaIpcMemHandle_t handle;
    LetHeader header;
};
constexpr std::uint64_t kTicketMagic = 0x6772766c65746970ull; // "grvletip"

bool direct_transport_wanted()
{
    const char* choice = std::getenv("GROVE_LET_TRANSPORT");
    if (!choice || std::strcmp(choice, "auto") == 0) return true;
    if (std::strcmp(choice, "host") == 0) return false;
    throw std::invalid_argument(std::string("GROVE_LET_TRANSPORT must be auto or host, not '") + choice + "'");
}

template <class T> std::vector<char> bytes_of(const T& value)
{
    std::vector<char> b(sizeof value);
    std::memcpy(b.data(), &value, sizeof value);
    return b;
}

} // namespace

IpcPeers::~IpcPeers()
{
    // The peers read nothing more: every exchange ended with a barrier after their copies.
    for (Mapping& m : mapped_)
        if (m.data) cudaIpcCloseMemHandle(m.data);
}

void IpcPeers::connect(RankExchange& ranks)
{
    const auto k = static_cast<std::size_t>(ranks.ranks());
    rank_ = ranks.rank();
    direct_.assign(k, 0);
    outbox_.clear();
    outbox_.resize(k);
    generation_.assign(k, 0);
    handle_.assign(k, cudaIpcMemHandle_t{});
    mapped_.assign(k, {});
    any_ = false;
    if (k == 1) return;

    // Each rank exports a small probe holding its own pattern; every rank takes part in each
    // collective below, whether it offers direct transfers or not.
    IpcProbe mine{};
    gpu::DeviceBuffer<std::int32_t> probe;
    probe.reserve(1, "peer probe");
    mine.pattern = 0x5a000000 + rank_;
    CUDA_CHECK(cudaMemcpy(probe.data(), &mine.pattern, sizeof mine.pattern, cudaMemcpyHostToDevice));
    if (direct_transport_wanted() && gethostname(mine.host, sizeof mine.host - 1) == 0) {
        if (cudaIpcGetMemHandle(&mine.handle, probe.data()) == cudaSuccess)
            mine.offers = 1;
        else
            cudaGetLastError();
    }
    std::vector<std::vector<char>> all;
    ranks.all_gather(bytes_of(mine), all);

    // Which ranks' probes this one maps and reads back.
    std::vector<char> reads(k, 0);
    for (std::size_t r = 0; r < k; ++r) {
        if (static_cast<int>(r) == rank_ || !mine.offers) continue;
        if (all[r].size() != sizeof(IpcProbe)) throw std::runtime_error("tree-gpu: a rank's peer probe is malformed");
        IpcProbe theirs;
        std::memcpy(&theirs, all[r].data(), sizeof theirs);
        theirs.host[sizeof theirs.host - 1] = 0;
        if (!theirs.offers || std::strcmp(theirs.host, mine.host) != 0) continue;
        void* at = nullptr;
        if (cudaIpcOpenMemHandle(&at, theirs.handle, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        std::int32_t seen = 0;
        if (cudaMemcpy(&seen, at, sizeof seen, cudaMemcpyDefault) == cudaSuccess && seen == theirs.pattern)
            reads[r] = 1;
        cudaGetLastError();
        cudaIpcCloseMemHandle(at);
        cudaGetLastError();
    }
    std::vector<std::vector<char>> matrix;
    ranks.all_gather(reads, matrix);
    for (std::size_t r = 0; r < k; ++r) {
        if (matrix[r].size() != k) throw std::runtime_error("tree-gpu: a rank's peer answers are malformed");
        for (std::size_t s = 0; s < k; ++s) {
            // Both ways, so that both ranks of a pair agree without asking again.
            const bool pair = matrix[r][s] != 0 && matrix[s][r] != 0;
            any_ = any_ || pair;
            if (pair && static_cast<int>(r) == rank_) direct_[s] = 1;
        }
    }
    ranks.barrier(); // no rank maps a probe any more when it is freed
}

char* IpcPeers::outbox(int rank, std::size_t bytes)
{
    if (!direct(rank)) throw std::logic_error("tree-gpu: an outbox for a rank that is not a direct peer");
    auto& box = outbox_[static_cast<std::size_t>(rank)];
    if (!box || box->capacity() < bytes) {
        if (box) retired_.push_back(std::move(box));
        box = std::make_unique<gpu::DeviceBuffer<char>>();
        box->reserve(bytes, "LETs for peers on this host");
        ++generation_[static_cast<std::size_t>(rank)];
        CUDA_CHECK(cudaIpcGetMemHandle(&handle_[static_cast<std::size_t>(rank)], box->data()));
    }
    return box->data();
}

std::vector<char> IpcPeers::ticket(int rank, std::size_t bytes, const LetHeader& header) const
{
    const auto& box = outbox_[static_cast<std::size_t>(rank)];
    if (!box || box->capacity() < bytes) throw std::logic_error("tree-gpu: a ticket for a LET not in its outbox");
    IpcTicket t{};
    t.magic = kTicketMagic;
    t.generation = generation_[static_cast<std::size_t>(rank)];
    t.bytes = bytes;
    t.handle = handle_[static_cast<std::size_t>(rank)];
    t.header = header;
    return bytes_of(t);
}

const char* IpcPeers::receive(int rank, const char* ticket, std::size_t size, LetHeader& header, std::size_t& bytes)
{
    IpcTicket t;
    if (size != sizeof t) throw std::runtime_error("received LET ticket is malformed: its length");
    std::memcpy(&t, ticket, sizeof t);
    if (t.magic != kTicketMagic) throw std::runtime_error("received LET ticket is malformed: not a ticket");
    Mapping& m = mapped_[static_cast<std::size_t>(rank)];
    if (!m.data || m.generation != t.generation) {
        if (m.data) CUDA_CHECK(cudaIpcCloseMemHandle(m.data));
        void* at = nullptr;
        CUDA_CHECK(cudaIpcOpenMemHandle(&at, t.handle, cudaIpcMemLazyEnablePeerAccess));
        m = {t.generation, static_cast<char*>(at)};
    }
    header = t.header;
    bytes = t.bytes;
    return m.data;
}

} // namespace grove
