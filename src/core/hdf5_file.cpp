#include "core/hdf5_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

namespace grove::h5 {

namespace {

// HDF5 prints a stack trace to stderr on every failed call unless told not to; we report
// failures ourselves, with the file and object named.
struct SilenceHdf5 {
    SilenceHdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }
};

void silence()
{
    static SilenceHdf5 once;
    (void)once;
}

hid_t checked(hid_t id, const std::string& what)
{
    if (id < 0) throw Error(what);
    return id;
}

void checked(herr_t status, const std::string& what, int)
{
    if (status < 0) throw Error(what);
}

std::string object_name(hid_t object)
{
    char buffer[512] = {0};
    const ssize_t len = H5Iget_name(object, buffer, sizeof(buffer));
    return len > 0 ? std::string(buffer) : std::string("?");
}

void write_attribute_raw(hid_t object, const std::string& name, hid_t file_type, hid_t mem_type, const void* data,
                         hsize_t count, bool scalar)
{
    if (H5Aexists(object, name.c_str()) > 0) H5Adelete(object, name.c_str());
    Handle space(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, nullptr), H5Sclose);
    Handle attr(checked(H5Acreate2(object, name.c_str(), file_type, space.id(), H5P_DEFAULT, H5P_DEFAULT),
                        "cannot create attribute " + name + " on " + object_name(object)),
                H5Aclose);
    checked(H5Awrite(attr.id(), mem_type, data), "cannot write attribute " + name, 0);
}

template <class T> std::vector<T> read_attribute_numeric(hid_t object, const std::string& name, hid_t mem_type)
{
    Handle attr(checked(H5Aopen(object, name.c_str(), H5P_DEFAULT),
                        "attribute " + name + " is missing on " + object_name(object)),
                H5Aclose);
    Handle space(H5Aget_space(attr.id()), H5Sclose);
    const hssize_t count = H5Sget_simple_extent_npoints(space.id());
    Handle type(H5Aget_type(attr.id()), H5Tclose);
    if (H5Tget_class(type.id()) != H5T_INTEGER && H5Tget_class(type.id()) != H5T_FLOAT)
        throw Error("attribute " + name + " on " + object_name(object) + " is not numeric");
    std::vector<T> values(static_cast<std::size_t>(count < 0 ? 0 : count));
    checked(H5Aread(attr.id(), mem_type, values.data()), "cannot read attribute " + name, 0);
    return values;
}

// Rows first .. first + rows - 1 of dataset `set`, every column, selected in `space` (its
// dataspace): their memory space (none for no rows) and the dataset's columns. Throws where the
// rows lie outside it.
struct Rows {
    Handle memory;
    hsize_t columns = 1;
};

Rows select_rows(hid_t set, hid_t space, std::size_t first, std::size_t rows)
{
    const int rank = H5Sget_simple_extent_ndims(space);
    hsize_t dims[2] = {0, 1};
    if (rank < 1 || rank > 2 || H5Sget_simple_extent_dims(space, dims, nullptr) < 0 || first + rows > dims[0])
        throw Error("rows " + std::to_string(first) + ".." + std::to_string(first + rows) + " lie outside dataset " +
                    object_name(set));
    Rows selected;
    selected.columns = rank == 2 ? dims[1] : 1;
    if (rows == 0) return selected;
    const hsize_t start[2] = {first, 0}, count[2] = {rows, selected.columns};
    checked(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr),
            "cannot select rows of dataset " + object_name(set), 0);
    selected.memory = Handle(H5Screate_simple(rank, count, nullptr), H5Sclose);
    return selected;
}

// The rows [first, first + rows) of a dataset (every row where rows is npos), all columns.
template <class T>
std::vector<T> read_dataset_numeric(hid_t parent, const std::string& name, hid_t mem_type, std::size_t first = 0,
                                    std::size_t rows = static_cast<std::size_t>(-1))
{
    Handle set(checked(H5Dopen2(parent, name.c_str(), H5P_DEFAULT),
                       "dataset " + name + " is missing in " + object_name(parent)),
               H5Dclose);
    Handle type(H5Dget_type(set.id()), H5Tclose);
    if (H5Tget_class(type.id()) != H5T_INTEGER && H5Tget_class(type.id()) != H5T_FLOAT)
        throw Error("dataset " + object_name(set.id()) + " is not numeric");
    Handle space(H5Dget_space(set.id()), H5Sclose);
    if (rows == static_cast<std::size_t>(-1)) {
        const hssize_t count = H5Sget_simple_extent_npoints(space.id());
        std::vector<T> values(static_cast<std::size_t>(count < 0 ? 0 : count));
        if (!values.empty())
            checked(H5Dread(set.id(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
                    "cannot read dataset " + object_name(set.id()), 0);
        return values;
    }
    const Rows selected = select_rows(set.id(), space.id(), first, rows);
    std::vector<T> values(rows * selected.columns);
    if (values.empty()) return values;
    checked(H5Dread(set.id(), mem_type, selected.memory.id(), space.id(), H5P_DEFAULT, values.data()),
            "cannot read dataset " + object_name(set.id()), 0);
    return values;
}

Handle create_dataset_raw(hid_t parent, const std::string& name, hid_t type, std::size_t rows, std::size_t cols)
{
    const hsize_t dims[2] = {rows, cols};
    Handle space(H5Screate_simple(cols == 0 ? 1 : 2, dims, nullptr), H5Sclose);
    return Handle(checked(H5Dcreate2(parent, name.c_str(), type, space.id(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                          "cannot create dataset " + name + " in " + object_name(parent)),
                  H5Dclose);
}

void write_dataset_raw(hid_t parent, const std::string& name, hid_t type, const void* data, std::size_t rows,
                       std::size_t cols)
{
    Handle set = create_dataset_raw(parent, name, type, rows, cols);
    if (rows > 0)
        checked(H5Dwrite(set.id(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data),
                "cannot write dataset " + name + " in " + object_name(parent), 0);
}

void write_rows_raw(hid_t parent, const std::string& name, hid_t type, std::size_t first, const void* data,
                    std::size_t rows)
{
    if (rows == 0) return;
    Handle set(checked(H5Dopen2(parent, name.c_str(), H5P_DEFAULT),
                       "dataset " + name + " is missing in " + object_name(parent)),
               H5Dclose);
    Handle space(H5Dget_space(set.id()), H5Sclose);
    const Rows selected = select_rows(set.id(), space.id(), first, rows);
    checked(H5Dwrite(set.id(), type, selected.memory.id(), space.id(), H5P_DEFAULT, data),
            "cannot write dataset " + object_name(set.id()), 0);
}

} // namespace

Handle& Handle::operator=(Handle&& other) noexcept
{
    if (this != &other) {
        reset();
        id_ = other.id_;
        closer_ = other.closer_;
        other.id_ = H5I_INVALID_HID;
    }
    return *this;
}

void Handle::reset()
{
    if (id_ >= 0 && closer_ != nullptr) closer_(id_);
    id_ = H5I_INVALID_HID;
}

hid_t Handle::release()
{
    return std::exchange(id_, H5I_INVALID_HID);
}

void close_file(Handle& file, const std::string& path)
{
    checked(H5Fflush(file.id(), H5F_SCOPE_GLOBAL), "cannot write " + path + " (flush failed: disk full?)", 0);
    checked(H5Fclose(file.release()), "cannot write " + path + " (close failed: disk full?)", 0);
}

void finish_file(Handle& file, const std::string& path)
{
    close_file(file, path);
    sync_file(path);
}

void sync_file(const std::string& path)
{
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0 || ::fsync(fd) != 0) {
        const std::string why = std::strerror(errno);
        if (fd >= 0) ::close(fd);
        throw Error("cannot write " + path + " (fsync: " + why + ")");
    }
    ::close(fd);
}

Handle create_file(const std::string& path)
{
    silence();
    return Handle(
        checked(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), "cannot create HDF5 file " + path),
        H5Fclose);
}

Handle open_file_read(const std::string& path)
{
    silence();
    if (!std::ifstream(path).good()) throw Error("no such file, or not readable");
    if (H5Fis_hdf5(path.c_str()) <= 0) throw Error("not an HDF5 file");
    return Handle(checked(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "cannot open the HDF5 file"), H5Fclose);
}

Handle open_file_rw(const std::string& path)
{
    silence();
    if (H5Fis_hdf5(path.c_str()) <= 0) throw Error("not an HDF5 file");
    return Handle(checked(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), "cannot open the HDF5 file for writing"),
                  H5Fclose);
}

Handle create_group(hid_t parent, const std::string& name)
{
    return Handle(
        checked(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "cannot create group " + name),
        H5Gclose);
}

Handle open_group(hid_t parent, const std::string& name)
{
    return Handle(checked(H5Gopen2(parent, name.c_str(), H5P_DEFAULT), "group " + name + " is missing"), H5Gclose);
}

bool has_link(hid_t parent, const std::string& name)
{
    return H5Lexists(parent, name.c_str(), H5P_DEFAULT) > 0;
}

bool has_attribute(hid_t object, const std::string& name)
{
    return H5Aexists(object, name.c_str()) > 0;
}

void write_attribute(hid_t object, const std::string& name, double value)
{
    write_attribute_raw(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value, 1, true);
}

void write_attribute(hid_t object, const std::string& name, std::int32_t value)
{
    write_attribute_raw(object, name, H5T_STD_I32LE, H5T_NATIVE_INT32, &value, 1, true);
}

void write_attribute(hid_t object, const std::string& name, const std::string& value)
{
    Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(type.id(), value.empty() ? 1 : value.size());
    H5Tset_strpad(type.id(), H5T_STR_NULLPAD);
    const std::string padded = value.empty() ? std::string(1, '\0') : value;
    write_attribute_raw(object, name, type.id(), type.id(), padded.data(), 1, true);
}

void write_attribute(hid_t object, const std::string& name, const std::vector<double>& values)
{
    write_attribute_raw(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, values.data(), values.size(), false);
}

void write_attribute(hid_t object, const std::string& name, const std::vector<std::uint64_t>& values)
{
    write_attribute_raw(object, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, values.data(), values.size(), false);
}

void write_attribute(hid_t object, const std::string& name, const std::vector<std::uint32_t>& values)
{
    write_attribute_raw(object, name, H5T_STD_U32LE, H5T_NATIVE_UINT32, values.data(), values.size(), false);
}

std::vector<double> read_attribute_doubles(hid_t object, const std::string& name)
{
    return read_attribute_numeric<double>(object, name, H5T_NATIVE_DOUBLE);
}

std::vector<std::uint64_t> read_attribute_u64(hid_t object, const std::string& name)
{
    return read_attribute_numeric<std::uint64_t>(object, name, H5T_NATIVE_UINT64);
}

std::string read_attribute_string(hid_t object, const std::string& name)
{
    Handle attr(checked(H5Aopen(object, name.c_str(), H5P_DEFAULT), "attribute " + name + " is missing"), H5Aclose);
    Handle type(H5Aget_type(attr.id()), H5Tclose);
    if (H5Tget_class(type.id()) != H5T_STRING) throw Error("attribute " + name + " is not a string");
    if (H5Tis_variable_str(type.id()) > 0) {
        char* text = nullptr;
        Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
        H5Tset_size(mem.id(), H5T_VARIABLE);
        H5Tset_cset(mem.id(), H5Tget_cset(type.id())); // h5py writes UTF-8; ASCII would not convert
        checked(H5Aread(attr.id(), mem.id(), &text), "cannot read attribute " + name, 0);
        std::string out = text ? text : "";
        H5free_memory(text);
        return out;
    }
    std::string out(H5Tget_size(type.id()), '\0');
    Handle mem(H5Tcopy(type.id()), H5Tclose); // the file's own string type, in memory order
    checked(H5Aread(attr.id(), mem.id(), out.data()), "cannot read attribute " + name, 0);
    return out.substr(0, out.find('\0'));
}

std::vector<std::pair<std::string, std::string>> attributes_as_text(hid_t object)
{
    std::vector<std::pair<std::string, std::string>> out;
    H5O_info_t info;
    checked(H5Oget_info(object, &info), "cannot inspect " + object_name(object), 0);
    for (hsize_t i = 0; i < info.num_attrs; ++i) {
        Handle attr(H5Aopen_by_idx(object, ".", H5_INDEX_NAME, H5_ITER_INC, i, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
        if (attr.id() < 0) continue;
        const ssize_t len = H5Aget_name(attr.id(), 0, nullptr);
        std::string name(static_cast<std::size_t>(len), '\0');
        H5Aget_name(attr.id(), name.size() + 1, name.data());
        Handle type(H5Aget_type(attr.id()), H5Tclose);
        std::string text;
        if (H5Tget_class(type.id()) == H5T_STRING) {
            text = read_attribute_string(object, name);
        } else {
            for (double v : read_attribute_doubles(object, name)) {
                if (!text.empty()) text += ' ';
                char buffer[32];
                std::snprintf(buffer, sizeof(buffer), "%.10g", v);
                text += buffer;
            }
        }
        out.emplace_back(name, text);
    }
    return out;
}

void write_dataset(hid_t parent, const std::string& name, const double* data, std::size_t rows, std::size_t cols)
{
    write_dataset_raw(parent, name, H5T_NATIVE_DOUBLE, data, rows, cols);
}

void write_dataset(hid_t parent, const std::string& name, const std::uint64_t* data, std::size_t rows, std::size_t cols)
{
    write_dataset_raw(parent, name, H5T_NATIVE_UINT64, data, rows, cols);
}

void create_dataset(hid_t parent, const std::string& name, bool integers, std::size_t rows, std::size_t cols)
{
    create_dataset_raw(parent, name, integers ? H5T_NATIVE_UINT64 : H5T_NATIVE_DOUBLE, rows, cols);
}

void write_rows(hid_t parent, const std::string& name, std::size_t first, const double* data, std::size_t rows)
{
    write_rows_raw(parent, name, H5T_NATIVE_DOUBLE, first, data, rows);
}

void write_rows(hid_t parent, const std::string& name, std::size_t first, const std::uint64_t* data, std::size_t rows)
{
    write_rows_raw(parent, name, H5T_NATIVE_UINT64, first, data, rows);
}

std::vector<hsize_t> dataset_shape(hid_t parent, const std::string& name)
{
    Handle set(checked(H5Dopen2(parent, name.c_str(), H5P_DEFAULT),
                       "dataset " + name + " is missing in " + object_name(parent)),
               H5Dclose);
    Handle space(H5Dget_space(set.id()), H5Sclose);
    const int rank = H5Sget_simple_extent_ndims(space.id());
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank < 0 ? 0 : rank));
    H5Sget_simple_extent_dims(space.id(), dims.data(), nullptr);
    return dims;
}

std::vector<double> read_dataset_doubles(hid_t parent, const std::string& name)
{
    return read_dataset_numeric<double>(parent, name, H5T_NATIVE_DOUBLE);
}

std::vector<std::uint64_t> read_dataset_u64(hid_t parent, const std::string& name)
{
    return read_dataset_numeric<std::uint64_t>(parent, name, H5T_NATIVE_UINT64);
}

std::vector<double> read_dataset_doubles(hid_t parent, const std::string& name, std::size_t first, std::size_t rows)
{
    return read_dataset_numeric<double>(parent, name, H5T_NATIVE_DOUBLE, first, rows);
}

std::vector<std::uint64_t> read_dataset_u64(hid_t parent, const std::string& name, std::size_t first, std::size_t rows)
{
    return read_dataset_numeric<std::uint64_t>(parent, name, H5T_NATIVE_UINT64, first, rows);
}

} // namespace grove::h5
