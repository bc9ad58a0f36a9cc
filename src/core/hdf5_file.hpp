// A small RAII layer over the HDF5 C API: owning handles, attributes and 1-D/2-D datasets of
// doubles and 64-bit integers, with every failure turned into an exception that names the object.
// HDF5's own error printing is switched off; our messages replace it.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <hdf5.h>

namespace grove::h5 {

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Owns one hid_t and closes it with the matching H5?close function.
class Handle {
  public:
    using Closer = herr_t (*)(hid_t);
    Handle() = default;
    Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
    Handle(Handle&& other) noexcept : id_(other.id_), closer_(other.closer_) { other.id_ = H5I_INVALID_HID; }
    Handle& operator=(Handle&& other) noexcept;
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    ~Handle() { reset(); }

    hid_t id() const { return id_; }
    void reset();
    // Gives up ownership without closing (after a close done by hand).
    hid_t release();

  private:
    hid_t id_ = H5I_INVALID_HID;
    Closer closer_ = nullptr;
};

// Files. open_file_read checks that the file exists and is HDF5 before opening; its messages do
// not repeat the path, which callers prefix.
Handle create_file(const std::string& path); // truncates
Handle open_file_read(const std::string& path);
Handle open_file_rw(const std::string& path); // an existing file, for adding groups
// Ends writing a file: flushes and closes it with every result checked, then fsyncs it, so that
// a full disk or a failed write is an exception here and never a file that only looks complete.
// `file` may hold no other open objects of the file; `path` is the file's name on disk.
void finish_file(Handle& file, const std::string& path);
// Its two halves: flushed and closed (the data in the system's cache, where another process
// opening the file sees it), then fsynced (on the disk).
void close_file(Handle& file, const std::string& path);
void sync_file(const std::string& path);
Handle create_group(hid_t parent, const std::string& name);
Handle open_group(hid_t parent, const std::string& name);
bool has_link(hid_t parent, const std::string& name);
bool has_attribute(hid_t object, const std::string& name);

// Attributes (scalars and short arrays).
void write_attribute(hid_t object, const std::string& name, double value);
void write_attribute(hid_t object, const std::string& name, std::int32_t value);
void write_attribute(hid_t object, const std::string& name, const std::string& value);
void write_attribute(hid_t object, const std::string& name, const std::vector<double>& values);
void write_attribute(hid_t object, const std::string& name, const std::vector<std::uint64_t>& values);
void write_attribute(hid_t object, const std::string& name, const std::vector<std::uint32_t>& values);
// Numeric attributes of any stored type, converted by HDF5; scalars come back as one element.
std::vector<double> read_attribute_doubles(hid_t object, const std::string& name);
std::vector<std::uint64_t> read_attribute_u64(hid_t object, const std::string& name);
std::string read_attribute_string(hid_t object, const std::string& name);
// Every attribute of `object` rendered as text (strings as is, numbers joined by spaces).
std::vector<std::pair<std::string, std::string>> attributes_as_text(hid_t object);

// Datasets: `rows` x `cols` (cols == 0 for 1-D), row-major.
void write_dataset(hid_t parent, const std::string& name, const double* data, std::size_t rows, std::size_t cols);
void write_dataset(hid_t parent, const std::string& name, const std::uint64_t* data, std::size_t rows,
                   std::size_t cols = 0);
// A dataset of rows x cols values (cols 0: one dimension) whose rows write_rows fills later, in
// any pieces (the processes of a run on domains each write theirs).
void create_dataset(hid_t parent, const std::string& name, bool integers, std::size_t rows, std::size_t cols);
void write_rows(hid_t parent, const std::string& name, std::size_t first, const double* data, std::size_t rows);
void write_rows(hid_t parent, const std::string& name, std::size_t first, const std::uint64_t* data, std::size_t rows);
std::vector<hsize_t> dataset_shape(hid_t parent, const std::string& name);
// Reads converting from whatever numeric type is stored (float, int32, ...).
std::vector<double> read_dataset_doubles(hid_t parent, const std::string& name);
std::vector<std::uint64_t> read_dataset_u64(hid_t parent, const std::string& name);
// The same for rows [first, first + rows) alone (a hyperslab), every column.
std::vector<double> read_dataset_doubles(hid_t parent, const std::string& name, std::size_t first, std::size_t rows);
std::vector<std::uint64_t> read_dataset_u64(hid_t parent, const std::string& name, std::size_t first, std::size_t rows);

} // namespace grove::h5
