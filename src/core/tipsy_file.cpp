#include "core/tipsy_file.hpp"

#include <algorithm>
#include <array>

#include "core/binary_file.hpp"

namespace grove {

namespace {

constexpr std::size_t kGasBytes = 48, kDarkBytes = 36, kStarBytes = 44;
constexpr std::uint32_t kBonsaiVersion = 2;

struct TipsyHeader {
    double time = 0;
    std::int32_t nbodies = 0, ndim = 0, nsph = 0, ndark = 0, nstar = 0;
    std::uint32_t pad = 0;
    std::size_t bytes = 32; // 28 without the padding
};

std::size_t records_bytes(const TipsyHeader& h)
{
    return kGasBytes * static_cast<std::size_t>(h.nsph) + kDarkBytes * static_cast<std::size_t>(h.ndark) +
           kStarBytes * static_cast<std::size_t>(h.nstar);
}

// The header in the byte order where ndim is 3 and the counts add up; false where neither.
bool read_header(BinaryReader& in, TipsyHeader& h)
{
    for (const ByteOrder order :
         {big_endian_order(), big_endian_order() == ByteOrder::native ? ByteOrder::swapped : ByteOrder::native}) {
        TipsyHeader t;
        t.time = in.peek<double>(0, order);
        t.nbodies = in.peek<std::int32_t>(8, order);
        t.ndim = in.peek<std::int32_t>(12, order);
        t.nsph = in.peek<std::int32_t>(16, order);
        t.ndark = in.peek<std::int32_t>(20, order);
        t.nstar = in.peek<std::int32_t>(24, order);
        t.pad = in.peek<std::uint32_t>(28, order);
        if (in.size() < 28 || t.ndim != 3 || t.nsph < 0 || t.ndark < 0 || t.nstar < 0 ||
            static_cast<long long>(t.nsph) + t.ndark + t.nstar != t.nbodies)
            continue;
        t.bytes = in.size() == 28 + records_bytes(t) ? 28 : 32;
        in.order = order;
        h = t;
        return true;
    }
    return false;
}

} // namespace

std::uint64_t tipsy_particle_count(const std::string& path)
{
    BinaryReader in(path, 32); // the header
    TipsyHeader h;
    return read_header(in, h) ? static_cast<std::uint64_t>(h.nbodies) : 0;
}

ParticleSet read_tipsy(const std::string& path, const Units& units)
{
    BinaryReader in(path);
    TipsyHeader h;
    if (!read_header(in, h)) in.fail("is not a tipsy file (no header with ndim = 3 and counts that add up)");
    const std::size_t expected = h.bytes + records_bytes(h);
    if (in.size() != expected)
        in.fail("the header's counts (" + std::to_string(h.nsph) + " gas, " + std::to_string(h.ndark) + " dark, " +
                std::to_string(h.nstar) + " star) need " + std::to_string(expected) + " bytes, the file has " +
                std::to_string(in.size()));
    if (h.nbodies == 0) in.fail("holds no particles");
    const bool with_ids = h.pad == kBonsaiVersion;
    in.seek(h.bytes);
    ParticleSet p;
    p.resize(static_cast<std::size_t>(h.nbodies));
    p.time = h.time;
    p.units = units;
    std::uint64_t largest_id = 0;
    std::vector<bool> numbered(p.size(), false);
    std::size_t i = 0;
    const auto kinematics = [&](std::size_t k) {
        p.mass[static_cast<Eigen::Index>(k)] = in.read<float>();
        for (int d = 0; d < 3; ++d) p.pos(d, static_cast<Eigen::Index>(k)) = in.read<float>();
        for (int d = 0; d < 3; ++d) p.vel(d, static_cast<Eigen::Index>(k)) = in.read<float>();
    };
    for (std::int32_t k = 0; k < h.nsph; ++k, ++i) {
        kinematics(i);
        in.skip(5 * sizeof(float)); // rho, temp, hsmooth, metals, phi
        p.type[i] = static_cast<std::uint8_t>(Component::Gas);
    }
    const auto id_or_skip = [&](std::size_t k, std::size_t skip_floats) {
        in.skip(skip_floats * sizeof(float));
        if (with_ids) {
            p.id[k] = in.read<std::uint64_t>();
            largest_id = std::max(largest_id, p.id[k]);
            numbered[k] = true;
        } else {
            in.skip(2 * sizeof(float)); // eps, phi
        }
    };
    for (std::int32_t k = 0; k < h.ndark; ++k, ++i) {
        kinematics(i);
        id_or_skip(i, 0);
        p.type[i] = static_cast<std::uint8_t>(Component::Halo);
    }
    for (std::int32_t k = 0; k < h.nstar; ++k, ++i) {
        kinematics(i);
        id_or_skip(i, 2); // metals, tform
        p.type[i] = static_cast<std::uint8_t>(Component::Stars);
    }
    // Particles without an ID in the file are numbered in file order, after the largest one read.
    for (std::size_t k = 0; k < p.size(); ++k)
        if (!numbered[k]) p.id[k] = ++largest_id;
    try {
        p.validate("particle data");
    } catch (const std::exception& e) {
        in.fail(e.what());
    }
    return p;
}

void write_tipsy(const std::string& path, const ParticleSet& p, const TipsyOptions& o)
{
    p.validate("cannot write " + path);
    std::array<std::vector<std::size_t>, 3> by_kind; // gas, dark, star
    for (std::size_t i = 0; i < p.size(); ++i) {
        const int t = p.type[i];
        by_kind[t == 0 ? 0 : (t == 1 || t == 5) ? 1 : 2].push_back(i);
    }
    if (p.size() > static_cast<std::size_t>(INT32_MAX))
        throw std::runtime_error("cannot write " + path + ": tipsy counts particles in 32 bits");
    BinaryWriter out;
    out.order = o.big_endian ? big_endian_order() : ByteOrder::native;
    out.write<double>(p.time);
    out.write<std::int32_t>(static_cast<std::int32_t>(p.size()));
    out.write<std::int32_t>(3);
    for (const auto& kind : by_kind) out.write<std::int32_t>(static_cast<std::int32_t>(kind.size()));
    out.write<std::uint32_t>(o.with_ids ? kBonsaiVersion : 0);
    const bool forces = p.has_forces();
    const auto kinematics = [&](std::size_t i) {
        const auto k = static_cast<Eigen::Index>(i);
        out.write<float>(static_cast<float>(p.mass[k]));
        for (int d = 0; d < 3; ++d) out.write<float>(static_cast<float>(p.pos(d, k)));
        for (int d = 0; d < 3; ++d) out.write<float>(static_cast<float>(p.vel(d, k)));
    };
    const auto phi = [&](std::size_t i) {
        return forces ? static_cast<float>(p.pot[static_cast<Eigen::Index>(i)]) : 0.f;
    };
    for (const std::size_t i : by_kind[0]) {
        kinematics(i);
        for (int f = 0; f < 4; ++f) out.write<float>(0.f); // rho, temp, hsmooth, metals
        out.write<float>(phi(i));
    }
    const auto id_or_phi = [&](std::size_t i) {
        if (o.with_ids) {
            out.write<std::uint64_t>(p.id[i]);
        } else {
            out.write<float>(0.f); // eps
            out.write<float>(phi(i));
        }
    };
    for (const std::size_t i : by_kind[1]) {
        kinematics(i);
        id_or_phi(i);
    }
    for (const std::size_t i : by_kind[2]) {
        kinematics(i);
        out.write<float>(0.f); // metals
        out.write<float>(0.f); // tform
        id_or_phi(i);
    }
    out.save(path);
}

} // namespace grove
