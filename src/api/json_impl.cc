// Boost.JSON compiled once, into qim_api (Debian ships it header-only: no libboost_json).
#include <boost/json/src.hpp>
