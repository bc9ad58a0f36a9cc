#include "core/gadget_binary.hpp"

#include <algorithm>
#include <array>
#include <map>

#include "core/binary_file.hpp"

namespace grove {

namespace {

constexpr std::uint32_t kHeaderBytes = 256;
// Enough of a file for its header in either format, to tell the format and count particles.
constexpr std::size_t kHeadBytes = 512;

struct GadgetHeader {
    std::array<std::uint64_t, kNumParticleTypes> npart{}, total{};
    std::array<double, kNumParticleTypes> massarr{};
    double time = 0;
    std::int32_t num_files = 1;
};

// The first record's length in either byte order: 256 (format 1) or 8 (format 2's name record).
int detect(BinaryReader& in)
{
    for (const ByteOrder order : {ByteOrder::native, ByteOrder::swapped}) {
        const auto first = in.peek<std::uint32_t>(0, order);
        if (first == kHeaderBytes && in.size() >= kHeaderBytes + 8) {
            in.order = order;
            return 1;
        }
        if (first == 8 && in.size() >= 16 + kHeaderBytes + 8) {
            unsigned char name[4];
            for (int k = 0; k < 4; ++k) name[k] = in.peek<unsigned char>(4 + static_cast<std::size_t>(k), order);
            if (std::string(reinterpret_cast<const char*>(name), 4) == "HEAD") {
                in.order = order;
                return 2;
            }
        }
    }
    return 0;
}

// A record's data: its offset and length, after checking both length markers.
struct Record {
    std::size_t at = 0, bytes = 0;
};

Record read_record(BinaryReader& in, const std::string& what)
{
    in.need(4, what + "'s length");
    const auto bytes = in.read<std::uint32_t>();
    in.need(static_cast<std::size_t>(bytes) + 4, what);
    Record r{in.position(), bytes};
    in.skip(bytes);
    if (in.read<std::uint32_t>() != bytes) in.fail(what + "'s length markers differ (a damaged record)");
    return r;
}

GadgetHeader read_header(BinaryReader& in, const Record& r)
{
    if (r.bytes != kHeaderBytes) in.fail("the header record has " + std::to_string(r.bytes) + " bytes, not 256");
    in.seek(r.at);
    GadgetHeader h;
    std::array<std::uint32_t, kNumParticleTypes> npart{}, total_low{}, total_high{};
    for (auto& n : npart) n = in.read<std::uint32_t>();
    for (auto& m : h.massarr) m = in.read<double>();
    h.time = in.read<double>();
    in.skip(8 + 4 + 4); // redshift, flag_sfr, flag_feedback
    for (auto& n : total_low) n = in.read<std::uint32_t>();
    in.skip(4); // flag_cooling
    h.num_files = in.read<std::int32_t>();
    in.skip(4 * 8 + 4 + 4); // BoxSize, Omega0, OmegaLambda, HubbleParam, flag_stellarage, flag_metals
    for (auto& n : total_high) n = in.read<std::uint32_t>();
    for (int t = 0; t < kNumParticleTypes; ++t) {
        h.npart[t] = npart[t];
        const std::uint64_t total = (static_cast<std::uint64_t>(total_high[t]) << 32) | total_low[t];
        h.total[t] = total;
        if (h.num_files <= 1 && total != 0 && total != npart[t])
            in.fail("the header's counts of type " + std::to_string(t) + " differ (npart " + std::to_string(npart[t]) +
                    ", npartTotal " + std::to_string(total) + ")");
    }
    return h;
}

// The blocks of the file after its header: by name in format 2, in GADGET-2's order in format 1.
std::map<std::string, Record> read_blocks(BinaryReader& in, int format)
{
    std::map<std::string, Record> blocks;
    const char* const order[] = {"POS ", "VEL ", "ID  ", "MASS"};
    for (int k = 0; in.left() > 0; ++k) {
        std::string name;
        if (format == 2) {
            const Record label = read_record(in, "a block name");
            if (label.bytes != 8) in.fail("a block name record has " + std::to_string(label.bytes) + " bytes, not 8");
            in.seek(label.at);
            char text[4];
            for (char& c : text) c = static_cast<char>(in.read<unsigned char>());
            name.assign(text, 4);
            in.skip(4 + 4); // the next record's length, and the name record's closing marker
        } else {
            // The gas blocks that may follow are not read, only checked to be whole records.
            name = k < 4 ? order[k] : "after MASS " + std::to_string(k - 3);
        }
        blocks[name] = read_record(in, "block " + name);
    }
    return blocks;
}

} // namespace

int gadget_binary_format(const std::string& path)
{
    BinaryReader in(path, kHeadBytes);
    return detect(in);
}

namespace {

// The header of a GADGET binary file (throws naming the file where it is not one).
GadgetHeader header_of(BinaryReader& in, int& format, Record& header_record)
{
    format = detect(in);
    if (format == 0) in.fail("is not a GADGET binary file (its first record is neither a 256-byte header nor HEAD)");
    if (format == 2) read_record(in, "the header's name");
    header_record = read_record(in, "the header");
    return read_header(in, header_record);
}

// The files of a snapshot that GADGET split over `count` of them, from the name of any:
// BASE.0 ... BASE.K-1.
std::vector<std::string> split_files(const BinaryReader& in, int count)
{
    const std::string& path = in.path();
    const auto dot = path.rfind('.');
    const std::string number = dot == std::string::npos ? "" : path.substr(dot + 1);
    if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos)
        in.fail("its header says the snapshot is split over " + std::to_string(count) +
                " files, but its name does not end in .K as GADGET names them");
    std::vector<std::string> files;
    for (int k = 0; k < count; ++k) files.push_back(path.substr(0, dot + 1) + std::to_string(k));
    return files;
}

ParticleSet read_one_file(const std::string& path, const Units& units);

} // namespace

std::uint64_t gadget_binary_particle_count(const std::string& path)
{
    BinaryReader in(path, kHeadBytes);
    if (detect(in) == 0) return 0;
    int format = 0;
    Record r;
    const GadgetHeader h = header_of(in, format, r);
    std::uint64_t n = 0;
    for (int t = 0; t < kNumParticleTypes; ++t) n += h.num_files > 1 ? h.total[t] : h.npart[t];
    return n;
}

ParticleSet read_gadget_binary(const std::string& path, const Units& units)
{
    int files = 1;
    std::array<std::uint64_t, kNumParticleTypes> total{};
    std::vector<std::string> parts{path};
    {
        BinaryReader in(path, kHeadBytes);
        int format = 0;
        Record r;
        const GadgetHeader h = header_of(in, format, r);
        files = h.num_files;
        total = h.total;
        if (files > 1) parts = split_files(in, files);
    }
    ParticleSet out = read_one_file(parts[0], units);
    for (std::size_t k = 1; k < parts.size(); ++k) out = concatenate(out, read_one_file(parts[k], units));
    if (files > 1) {
        std::array<std::uint64_t, kNumParticleTypes> read{};
        for (const auto t : out.type) ++read[t];
        if (read != total)
            throw std::runtime_error(path + ": the " + std::to_string(files) +
                                     " files hold other counts per type than the header's npartTotal");
        out.validate("the snapshot in " + std::to_string(files) + " files from " + parts[0]);
    }
    return out;
}

namespace {

ParticleSet read_one_file(const std::string& path, const Units& units)
{
    BinaryReader in(path);
    int format = 0;
    Record header_record;
    const GadgetHeader h = header_of(in, format, header_record);
    in.seek(header_record.at + header_record.bytes + 4);
    std::uint64_t n = 0, with_mass = 0;
    for (int t = 0; t < kNumParticleTypes; ++t) {
        n += h.npart[t];
        if (h.massarr[t] == 0) with_mass += h.npart[t];
    }
    if (n == 0) in.fail("holds no particles");
    const auto blocks = read_blocks(in, format);
    const auto block = [&](const std::string& name, std::uint64_t count, int components) {
        const auto it = blocks.find(name);
        if (it == blocks.end()) in.fail("has no " + name + " block");
        const std::uint64_t values = count * static_cast<std::uint64_t>(components);
        const std::size_t bytes = it->second.bytes;
        if (bytes != 4 * values && bytes != 8 * values)
            in.fail("block " + name + " has " + std::to_string(bytes) + " bytes for " + std::to_string(count) +
                    " particles (the header's counts do not match the file)");
        return std::make_pair(it->second, bytes == 8 * values ? 8 : 4);
    };
    ParticleSet p;
    p.resize(static_cast<std::size_t>(n));
    p.time = h.time;
    p.units = units;
    const auto read_real = [&](int width) { return width == 8 ? in.read<double>() : in.read<float>(); };
    const auto [pos, pos_width] = block("POS ", n, 3);
    in.seek(pos.at);
    for (std::size_t i = 0; i < p.size(); ++i)
        for (int d = 0; d < 3; ++d) p.pos(d, static_cast<Eigen::Index>(i)) = read_real(pos_width);
    const auto [vel, vel_width] = block("VEL ", n, 3);
    in.seek(vel.at);
    for (std::size_t i = 0; i < p.size(); ++i)
        for (int d = 0; d < 3; ++d) p.vel(d, static_cast<Eigen::Index>(i)) = read_real(vel_width);
    const auto [ids, id_width] = block("ID  ", n, 1);
    in.seek(ids.at);
    for (auto& id : p.id) id = id_width == 8 ? in.read<std::uint64_t>() : in.read<std::uint32_t>();
    std::pair<Record, int> masses{};
    if (with_mass > 0) {
        masses = block("MASS", with_mass, 1);
        in.seek(masses.first.at);
    }
    std::size_t i = 0;
    for (int t = 0; t < kNumParticleTypes; ++t)
        for (std::uint64_t k = 0; k < h.npart[t]; ++k, ++i) {
            p.type[i] = static_cast<std::uint8_t>(t);
            p.mass[static_cast<Eigen::Index>(i)] = h.massarr[t] != 0 ? h.massarr[t] : read_real(masses.second);
        }
    try {
        p.validate("particle data");
    } catch (const std::exception& e) {
        in.fail(e.what());
    }
    return p;
}

} // namespace

void write_gadget_binary(const std::string& path, const ParticleSet& p, const GadgetBinaryOptions& o)
{
    p.validate("cannot write " + path);
    if (o.format != 1 && o.format != 2)
        throw std::runtime_error("cannot write " + path + ": GADGET binary has formats 1 and 2");
    std::array<std::vector<std::size_t>, kNumParticleTypes> by_type;
    for (std::size_t i = 0; i < p.size(); ++i) by_type[p.type[i]].push_back(i);
    std::vector<std::size_t> order;
    for (const auto& t : by_type) order.insert(order.end(), t.begin(), t.end());
    for (const auto& t : by_type)
        if (t.size() > UINT32_MAX)
            throw std::runtime_error("cannot write " + path + ": GADGET binary counts a type in 32 bits per file");
    const bool wide_ids = *std::max_element(p.id.begin(), p.id.end()) > UINT32_MAX;
    BinaryWriter out;
    // A record (the data's length before and after it); in format 2 after a record of its name and
    // the data record's length with its markers.
    const auto block = [&](const char* name, auto&& fill) {
        std::size_t next = 0;
        if (o.format == 2) {
            out.write<std::uint32_t>(8);
            for (int k = 0; k < 4; ++k) out.write<unsigned char>(static_cast<unsigned char>(name[k]));
            next = out.size();
            out.write<std::uint32_t>(0); // patched below
            out.write<std::uint32_t>(8);
        }
        const std::size_t start = out.size();
        out.write<std::uint32_t>(0);
        fill();
        const auto bytes = static_cast<std::uint32_t>(out.size() - start - 4);
        out.write<std::uint32_t>(bytes);
        out.patch_u32(start, bytes);
        if (o.format == 2) out.patch_u32(next, bytes + 8);
    };
    const auto real = [&](double v) {
        if (o.double_precision)
            out.write<double>(v);
        else
            out.write<float>(static_cast<float>(v));
    };
    block("HEAD", [&] {
        const std::size_t start = out.size();
        for (const auto& t : by_type) out.write<std::uint32_t>(static_cast<std::uint32_t>(t.size()));
        for (int t = 0; t < kNumParticleTypes; ++t) out.write<double>(0); // every mass in the MASS block
        out.write<double>(p.time);
        out.write<double>(0); // redshift
        out.write<std::int32_t>(0);
        out.write<std::int32_t>(0);
        for (const auto& t : by_type) out.write<std::uint32_t>(static_cast<std::uint32_t>(t.size()));
        out.write<std::int32_t>(0);                       // flag_cooling
        out.write<std::int32_t>(1);                       // num_files
        for (int k = 0; k < 4; ++k) out.write<double>(0); // BoxSize, Omega0, OmegaLambda, HubbleParam
        out.write<std::int32_t>(0);
        out.write<std::int32_t>(0);
        for (int t = 0; t < kNumParticleTypes; ++t) out.write<std::uint32_t>(0); // npartTotal_HighWord
        out.zeros(kHeaderBytes - (out.size() - start));
    });
    block("POS ", [&] {
        for (const std::size_t i : order)
            for (int d = 0; d < 3; ++d) real(p.pos(d, static_cast<Eigen::Index>(i)));
    });
    block("VEL ", [&] {
        for (const std::size_t i : order)
            for (int d = 0; d < 3; ++d) real(p.vel(d, static_cast<Eigen::Index>(i)));
    });
    block("ID  ", [&] {
        for (const std::size_t i : order)
            if (wide_ids)
                out.write<std::uint64_t>(p.id[i]);
            else
                out.write<std::uint32_t>(static_cast<std::uint32_t>(p.id[i]));
    });
    block("MASS", [&] {
        for (const std::size_t i : order) real(p.mass[static_cast<Eigen::Index>(i)]);
    });
    out.save(path);
}

} // namespace grove
